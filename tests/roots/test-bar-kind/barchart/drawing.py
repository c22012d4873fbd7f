"""A bar chart as shapes of the package's drawing model: one :class:`Drawing` that the page gets as
SVG and LaTeX as a PDF, so the two never disagree."""

from __future__ import annotations

from typing import Any

from sphinx_tensorviz.render.numbers import fmt
from sphinx_tensorviz.render.shapes import Drawing, Group, Line, Paint, Rect, Shape, Text
from sphinx_tensorviz.render.svg import ID_TOKEN

BAR_W, GAP, HEIGHT, PAD, FONT = 48, 12, 160, 24, 13
FILL = Paint(fill="#3b6ea8")  # a blue with contrast against white and black text beside it


def bar_drawing(data: dict[str, Any], title: str, alt: str) -> Drawing:
    """One bar per value from a zero line (negative values hang below it), its value above, its label under."""
    values, labels = data["values"], data["labels"]
    low, high = min(0.0, *values), max(0.0, *values)
    scale = HEIGHT / ((high - low) or 1.0)
    zero = PAD + high * scale
    shapes: list[Shape] = []
    for index, (value, label) in enumerate(zip(values, labels)):
        x = PAD + index * (BAR_W + GAP)
        top = zero - max(value, 0.0) * scale
        shapes.append(Rect(x, top, BAR_W, abs(value) * scale, FILL, tooltip=f"{label}: {fmt(value)}"))
        shapes.append(Text(x + BAR_W / 2, top - 4, fmt(value, 3), anchor="middle"))
        shapes.append(Text(x + BAR_W / 2, PAD + HEIGHT + FONT + 8, label, anchor="middle"))
    width = 2 * PAD + len(values) * (BAR_W + GAP) - GAP
    shapes.append(Line(PAD, zero, width - PAD, zero))
    return Drawing(width=width, height=HEIGHT + 2 * PAD + FONT + 8, title=title, desc=alt, id_prefix=ID_TOKEN,
                   cls="tv-svg-bar", font_family="system-ui, sans-serif", font_size=FONT,
                   children=(Group(tuple(shapes), fill="currentColor"),))
