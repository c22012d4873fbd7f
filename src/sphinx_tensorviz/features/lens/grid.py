"""The lens as one drawing: a row per layer, a column per position, the top-1 token in each cell.

The colour is the target's probability, on one scale from 0 to 1 with a colour bar (``render/
cell_grid.py``'s); the top-1 token's label is written in the cell in the scale's readable text
colour, cut to :data:`LABEL_CHARS` characters (the tooltip and the tables hold the whole label).
The same shapes become the SVG and the PDF.
"""

from __future__ import annotations

from typing import Any

from ...core.i18n import _
from ...render import svg
from ...render.cell_grid import FONT_FAMILY, OUTLINE, colour_bar
from ...render.colors import Scale
from ...render.numbers import fmt
from ...render.shapes import Drawing, Group, Paint, Rect, Shape, Text
from .describe import cell_words, column_labels, layer_labels, token_label

FONT = 12
CHAR_W = 0.62 * FONT
CELL_H = 26
PAD = 10
#: a top-1 label longer than this is cut (with an ellipsis) to keep cells narrow
LABEL_CHARS = 6


def lens_scale(colormap: str) -> Scale:
    return Scale(colormap, 0.0, 1.0, False)


def short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "\u2026"


def lens_drawing(data: dict[str, Any], *, title: str, alt: str, colormap: str) -> Drawing:
    """The cells with their top-1 tokens, row and column labels, and the colour bar at the right."""
    scale = lens_scale(colormap)
    columns = column_labels(data)
    rows = layer_labels(data)
    tops = [[short(token_label(data, cell[0])) for cell in layer] for layer in data["topIds"]]
    cell_w = max(34, max(len(t) for row in tops for t in row) * CHAR_W + 10)
    left = PAD + max(len(r) for r in rows) * CHAR_W + 8
    top = PAD + max(len(c) for c in columns) * CHAR_W * 0.72 + FONT
    grid_w, grid_h = cell_w * len(columns), CELL_H * len(rows)
    shapes: list[Shape] = [Text(left - 8, top + CELL_H * i + CELL_H / 2, r, anchor="end", baseline="central")
                           for i, r in enumerate(rows)]
    shapes.extend(Text(left + cell_w * j + cell_w / 2, top - 6, c, anchor="start", rotate=-45)
                  for j, c in enumerate(columns))
    cells: list[Shape] = []
    for i, layer in enumerate(data["probabilities"]):
        for j, p in enumerate(layer):
            x, y = left + cell_w * j, top + CELL_H * i
            cells.append(Rect(x, y, cell_w, CELL_H, Paint(fill=scale.color(p)), tooltip=cell_words(data, i, j)))
            cells.append(Text(x + cell_w / 2, y + CELL_H / 2, tops[i][j], size=FONT, anchor="middle",
                              baseline="central", fill=scale.text_color(p)))
    cells.append(Rect(left, top, grid_w, grid_h, OUTLINE))
    bar_x = left + grid_w + 24
    bar_h = max(grid_h, 120)
    bar = colour_bar(scale, bar_x, top, bar_h, _("probability of the target"), [fmt(v) for v in (1.0, 0.5, 0.0)])
    return Drawing(width=bar_x + 16 + 8 + 3 * CHAR_W + 10 + FONT + PAD + 18, height=top + bar_h + PAD, title=title,
                   desc=alt, id_prefix=svg.ID_TOKEN, cls="tv-svg-lens", font_family=FONT_FAMILY, font_size=FONT,
                   compact=True, children=(Group(tuple(shapes), cls="tv-labels", fill="currentColor"),
                                           Group(tuple(cells), cls="tv-cells"), *bar))
