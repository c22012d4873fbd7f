"""A grid of coloured cells: values with row and column labels, and a colour bar with its ticks.

Shared drawing: a heatmap is one, and so is a recorded activation strip (a graph's checkpoint), so
it belongs to no single kind. One :class:`~.shapes.Drawing` serves both outputs:
:func:`cell_grid_svg` writes it as an inline, accessible SVG (``role="img"``, ``<title>``/``<desc>``
with page-unique ids, per-cell tooltips, text that follows the page's colour via ``currentColor``
so dark themes work), and a kind's PDF drawer (the heatmap's ``pdf.py``) hands the very same shapes
to :func:`.mpl_writer.save_pdf` for LaTeX.
"""

from __future__ import annotations

from typing import Any

from . import svg
from .colors import Scale, make_scale
from .numbers import fmt
from .shapes import Drawing, Gradient, Group, Line, Paint, Rect, Shape, Text
from .svg_writer import write

FONT = 13
CELL_W, CELL_H = 56, 30
PAD = 8
BAR_W = 16
CHAR_W = 0.62 * FONT
FONT_FAMILY = "system-ui, sans-serif"
OUTLINE = Paint(fill="none", stroke="currentColor", stroke_opacity=0.6)


def _width(label: str) -> float:
    return len(label) * CHAR_W


def cell_grid_svg(data: dict[str, Any], *, title: str, alt: str, colormap: str | None,
                scale: Scale | None = None) -> str:
    """The SVG markup; ids use :data:`svg.ID_TOKEN` as their prefix. ``scale``: a colour scale
    shared with other figures (a sweep), instead of one fitted to this data."""
    return write(cell_grid_drawing(data, title=title, alt=alt, colormap=colormap, scale=scale))


def cell_grid_drawing(data: dict[str, Any], *, title: str, alt: str, colormap: str | None,
                    scale: Scale | None = None) -> Drawing:
    """The heatmap as shapes; cell values are printed in the cells of small heatmaps."""
    values, rows, cols = data["values"], data["rows"], data["columns"]
    scale = scale or make_scale(values, data["diverging"], colormap)
    show_values = len(cols) <= 12 and len(rows) <= 24
    rotate = max(_width(c) for c in cols) > CELL_W - 4
    left = PAD + max(_width(r) for r in rows) + 8
    top = PAD + (max(_width(c) for c in cols) * 0.72 + FONT if rotate else FONT + 6)
    grid_w, grid_h = CELL_W * len(cols), CELL_H * len(rows)
    bar_x = left + grid_w + 24
    bar_h = max(grid_h, 120)
    tick_labels = [fmt(v) for v in _ticks(scale)]
    width = bar_x + BAR_W + 8 + max(_width(t) for t in tick_labels) + PAD + FONT + 8
    height = top + max(grid_h, bar_h) + PAD
    labels: list[Shape] = [Text(left - 8, top + CELL_H * i + CELL_H / 2, label, anchor="end", baseline="central")
                           for i, label in enumerate(rows)]
    for j, label in enumerate(cols):
        x = left + CELL_W * j + CELL_W / 2
        labels.append(Text(x, top - 6, label, anchor="start", rotate=-45) if rotate
                      else Text(x, top - 6, label, anchor="middle"))
    cells: list[Shape] = []
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            x, y = left + CELL_W * j, top + CELL_H * i
            cells.append(Rect(x, y, CELL_W, CELL_H, Paint(fill=scale.color(value)),
                              tooltip=f"{rows[i]}, {cols[j]}: {fmt(value)}"))
            if show_values:
                cells.append(Text(x + CELL_W / 2, y + CELL_H / 2, fmt(value, 2), size=12, anchor="middle",
                                  baseline="central", fill=scale.text_color(value)))
    cells.append(Rect(left, top, grid_w, grid_h, OUTLINE))
    return Drawing(
        width=width, height=height, title=title, desc=alt, id_prefix=svg.ID_TOKEN, cls="tv-svg-heatmap",
        font_family=FONT_FAMILY, font_size=FONT, compact=True,
        children=(Group(tuple(labels), cls="tv-labels", fill="currentColor"), Group(tuple(cells), cls="tv-cells"),
                  *colour_bar(scale, bar_x, top, bar_h, data.get("unit", ""), tick_labels)),
    )


def _ticks(scale: Scale) -> list[float]:
    middle = 0.0 if scale.diverging else (scale.low + scale.high) / 2
    return [scale.high, middle, scale.low]


def colour_bar(scale: Scale, x: float, top: float, height: float, unit: str, labels: list[str]) -> list[Shape]:
    """The gradient bar (high at the top), three ticks with their numbers, and the unit beside it (shared by
    every drawing on a colour scale: a heatmap, an attention grid)."""
    gradient = Gradient(f"{svg.ID_TOKEN}-bar", tuple(
        (k / 10, scale.color(scale.high - (scale.high - scale.low) * k / 10)) for k in range(11)))
    bar: list[Shape] = [Rect(x, top, BAR_W, height, Paint(fill=f"url(#{gradient.id})", stroke="currentColor",
                                                           stroke_opacity=0.6))]
    for label, frac in zip(labels, (0.0, 0.5, 1.0)):
        y = top + height * frac
        bar.append(Line(x + BAR_W, y, x + BAR_W + 5, y))
        bar.append(Text(x + BAR_W + 8, y, label, baseline="central"))
    if unit:
        label_x = x + BAR_W + 8 + max(_width(t) for t in labels) + 10 + FONT / 2
        bar.append(Text(label_x, top + height / 2, unit, anchor="middle", rotate=90))
    return [gradient, Group(tuple(bar), cls="tv-colour-bar", fill="currentColor")]
