"""Small multiples: a grid of small maps (channels, heads) on one shared colour scale, as inline SVG."""

from __future__ import annotations

from . import svg
from .colors import make_scale
from .describe import fmt

CELL = 9  # pixels per map cell
GAP = 14
FONT = 12


def small_multiples_svg(maps: list[list[list[float]]], titles: list[str], *, title: str, alt: str,
                        diverging: bool) -> str:
    """A grid of small maps on one shared colour scale; each cell has a tooltip with its value."""
    scale = make_scale([row for m in maps for row in m], diverging, None)
    longest = max(max(len(m), len(m[0]) if m else 0) for m in maps)
    cell = max(CELL, min(24, 96 // max(longest, 1)))  # small maps get bigger cells
    side_h = max(len(m) for m in maps) * cell
    side_w = max(max(len(m[0]) for m in maps if m) * cell, max(len(t) for t in titles) * FONT * 0.62)
    per_row = max(1, min(len(maps), 640 // (side_w + GAP)))
    rows = -(-len(maps) // per_row)
    width = per_row * (side_w + GAP) + GAP
    height = rows * (side_h + FONT + GAP + 4) + GAP
    tid = svg.ID_TOKEN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tv-svg-maps" role="img" '
        f'aria-labelledby="{tid}-title {tid}-desc" viewBox="0 0 {svg.num(width)} {svg.num(height)}" '
        f'width="{svg.num(width)}" height="{svg.num(height)}" font-size="{FONT}" '
        f'font-family="system-ui, sans-serif">',
        f"<title id=\"{tid}-title\">{svg.text(title)}</title>",
        f"<desc id=\"{tid}-desc\">{svg.text(alt)}</desc>",
    ]
    for k, (matrix, name) in enumerate(zip(maps, titles)):
        x0 = GAP + (k % per_row) * (side_w + GAP)
        y0 = GAP + (k // per_row) * (side_h + FONT + GAP + 4)
        out.append(f'<g class="tv-map"><text x="{svg.num(x0)}" y="{svg.num(y0 + FONT - 2)}" '
                   f'fill="currentColor">{svg.text(name)}</text>')
        top = y0 + FONT + 4
        for i, row in enumerate(matrix):
            for j, value in enumerate(row):
                out.append(f'<rect x="{svg.num(x0 + j * cell)}" y="{svg.num(top + i * cell)}" width="{cell}" '
                           f'height="{cell}" fill="{scale.color(value)}"><title>'
                           f'{svg.text(f"{name}, row {i}, column {j}: {fmt(value)}")}</title></rect>')
        out.append(f'<rect x="{svg.num(x0)}" y="{svg.num(top)}" width="{len(matrix[0]) * cell if matrix else 0}" '
                   f'height="{len(matrix) * cell}" fill="none" stroke="currentColor" stroke-opacity="0.6"/></g>')
    out.append("</svg>")
    return "\n".join(out)
