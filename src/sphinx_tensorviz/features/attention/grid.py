"""The grid of small attention maps (a row per layer, a column per head) as one drawing.

Every map shares one colour scale, 0 to 1 (weights are probabilities), with one colour bar; each
map says its layer and head above it and, while the tokens fit, the query tokens on its left and
the key tokens under the bottom row. The same shapes become the SVG and the PDF.
"""

from __future__ import annotations

from typing import Any

from ...render import svg
from ...render.cell_grid import FONT_FAMILY, OUTLINE, colour_bar
from ...render.colors import Scale
from ...render.numbers import fmt
from ...render.shapes import Drawing, Group, Paint, Rect, Shape, Text
from .describe import display_tokens, map_title

FONT = 12
CHAR_W = 0.62 * FONT
GAP = 18
#: beyond this many tokens the grid has no token labels (each head's larger view keeps them)
LABELLED_TOKENS = 24


def attention_scale(colormap: str) -> Scale:
    return Scale(colormap, 0.0, 1.0, False)


def grid_drawing(data: dict[str, Any], *, title: str, alt: str, colormap: str) -> Drawing:
    """The maps as shapes, with a shared colour bar at the right."""
    scale = attention_scale(colormap)
    tokens = display_tokens(data["tokens"])
    count = len(tokens)
    labelled = count <= LABELLED_TOKENS
    cell = max(14, min(22, 220 // count)) if labelled else max(4, 220 // count)
    label_w = max(len(t) for t in tokens) * CHAR_W + 6 if labelled else 0
    layers = sorted({item["layer"] for item in data["maps"]})
    heads = sorted({item["head"] for item in data["maps"]})
    side = count * cell
    title_w = max(len(map_title(item)) for item in data["maps"]) * CHAR_W
    step_x = label_w + max(side, title_w) + GAP
    step_y = FONT + 6 + side + GAP
    keys_h = label_w * 0.72 + FONT if labelled else 0
    maps: list[Shape] = []
    for item in data["maps"]:
        x0 = GAP + heads.index(item["head"]) * step_x
        y0 = GAP + layers.index(item["layer"]) * step_y
        name = map_title(item)
        top, left = y0 + FONT + 6, x0 + label_w
        shapes: list[Shape] = [Text(left, y0 + FONT - 2, name)]
        if labelled:
            shapes.extend(Text(left - 4, top + cell * i + cell / 2, t, anchor="end", baseline="central", size=FONT)
                          for i, t in enumerate(tokens))
        shapes.extend(Rect(left + j * cell, top + i * cell, cell, cell, Paint(fill=scale.color(w)),
                           tooltip=f"{name}, query {tokens[i]}, key {tokens[j]}: {fmt(w)}")
                      for i, row in enumerate(item["weights"]) for j, w in enumerate(row))
        shapes.append(Rect(left, top, side, side, OUTLINE))
        if labelled and item["layer"] == layers[-1]:
            shapes.extend(Text(left + j * cell + cell / 2, top + side + 6, t, anchor="end", rotate=-45, size=FONT)
                          for j, t in enumerate(tokens))
        maps.append(Group(tuple(shapes), cls="tv-map", fill="currentColor"))
    bar_x = GAP + len(heads) * step_x
    grid_h = len(layers) * step_y + keys_h
    tick_labels = [fmt(v) for v in (1.0, 0.5, 0.0)]
    bar = colour_bar(scale, bar_x, GAP + FONT + 6, max(120, side), "attention weight", tick_labels)
    return Drawing(width=bar_x + 90, height=GAP + max(grid_h, 120 + FONT + 6) + GAP, title=title, desc=alt,
                   id_prefix=svg.ID_TOKEN, cls="tv-svg-attention", font_family=FONT_FAMILY, font_size=FONT,
                   compact=True, children=(*maps, *bar))


def head_data(data: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """One head as the data of a cell grid (its larger view)."""
    tokens = display_tokens(data["tokens"])
    return {"values": item["weights"], "rows": tokens, "columns": tokens, "unit": "attention weight",
            "diverging": False}
