"""Small multiples: a grid of small maps (channels, heads) on one shared colour scale."""

from __future__ import annotations

from ....render import svg
from ....render.cell_grid import FONT_FAMILY, OUTLINE
from ....render.colors import make_scale
from ....render.numbers import fmt
from ....render.shapes import Drawing, Group, Paint, Rect, Shape, Text
from ....render.svg_writer import write

CELL = 9  # pixels per map cell
GAP = 14
FONT = 12


def small_multiples_svg(maps: list[list[list[float]]], titles: list[str], *, title: str, alt: str,
                        diverging: bool) -> str:
    """A grid of small maps on one shared colour scale; each cell has a tooltip with its value."""
    return write(small_multiples_drawing(maps, titles, title=title, alt=alt, diverging=diverging))


def small_multiples_drawing(maps: list[list[list[float]]], titles: list[str], *, title: str, alt: str,
                            diverging: bool) -> Drawing:
    """The maps as shapes, as many to a row as fit in 640 px; small maps get bigger cells."""
    scale = make_scale([row for m in maps for row in m], diverging, None)
    longest = max(max(len(m), len(m[0]) if m else 0) for m in maps)
    cell = max(CELL, min(24, 96 // max(longest, 1)))
    side_h = max(len(m) for m in maps) * cell
    side_w = max(max(len(m[0]) for m in maps if m) * cell, max(len(t) for t in titles) * FONT * 0.62)
    per_row = max(1, min(len(maps), 640 // (side_w + GAP)))
    rows = -(-len(maps) // per_row)
    groups: list[Shape] = []
    for k, (matrix, name) in enumerate(zip(maps, titles)):
        x0 = GAP + (k % per_row) * (side_w + GAP)
        y0 = GAP + (k // per_row) * (side_h + FONT + GAP + 4)
        top = y0 + FONT + 4
        shapes: list[Shape] = [Text(x0, y0 + FONT - 2, name, fill="currentColor")]
        shapes.extend(Rect(x0 + j * cell, top + i * cell, cell, cell, Paint(fill=scale.color(value)),
                           tooltip=f"{name}, row {i}, column {j}: {fmt(value)}")
                      for i, row in enumerate(matrix) for j, value in enumerate(row))
        shapes.append(Rect(x0, top, len(matrix[0]) * cell if matrix else 0, len(matrix) * cell, OUTLINE))
        groups.append(Group(tuple(shapes), cls="tv-map"))
    return Drawing(width=per_row * (side_w + GAP) + GAP, height=rows * (side_h + FONT + GAP + 4) + GAP,
                   children=tuple(groups), title=title, desc=alt, id_prefix=svg.ID_TOKEN, cls="tv-svg-maps",
                   font_family=FONT_FAMILY, font_size=FONT, compact=True)
