"""A bar artifact as :class:`FigureParts`: one drawing (SVG on the page, PDF for LaTeX), alt text and
a data table, built from the package's drawing model so every builder shows the same figure."""

from __future__ import annotations

from functools import partial
from typing import Any

from sphinx_tensorviz.render.cache import artifact_key
from sphinx_tensorviz.render.mpl_writer import save_pdf
from sphinx_tensorviz.render.numbers import fmt
from sphinx_tensorviz.render.parts import FigureParts
from sphinx_tensorviz.render.shapes import Drawing, Group, Line, Paint, Rect, Text
from sphinx_tensorviz.render.svg import ID_TOKEN
from sphinx_tensorviz.render.svg_writer import write
from sphinx_tensorviz.render.tables import data_table

BAR_W, GAP, HEIGHT, PAD, FONT = 48, 12, 160, 24, 13
FILL = Paint(fill="#3b6ea8")  # dark enough for white page and black text beside it


def bar_drawing(data: dict[str, Any], title: str, alt: str) -> Drawing:
    """One bar per value from a zero line (negative values hang below it), its value above, its label under."""
    values, labels = data["values"], data["labels"]
    low, high = min(0.0, *values), max(0.0, *values)
    scale = HEIGHT / ((high - low) or 1.0)
    zero = PAD + high * scale
    shapes: list[Any] = []
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


def bar_alt(data: dict[str, Any]) -> str:
    values, labels = data["values"], data["labels"]
    top = max(range(len(values)), key=values.__getitem__)
    return (f"Bar chart of {len(values)} bars{' of ' + data['unit'] if data['unit'] else ''}; "
            f"the tallest is {labels[top]} at {fmt(values[top])}.")


def bar_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    title = render.get("title") or "Bar chart"
    alt = render.get("alt") or bar_alt(data)
    drawing = partial(bar_drawing, data, title, alt)
    table = data_table(f"Data: {data['unit'] or 'values'}", "bar", data["labels"], [data["unit"] or "value"],
                       [[fmt(v)] for v in data["values"]])
    return FigureParts(title=title, alt=alt, svg=ctx.cache.svg(artifact_key(artifact), renderer_hash,
                                                               lambda: write(drawing())),
                       details=[table], draw_pdf=lambda path: save_pdf(drawing(), path, heading=True))
