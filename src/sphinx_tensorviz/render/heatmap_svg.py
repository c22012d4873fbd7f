"""Draw a heatmap artifact as an inline, accessible SVG.

Hand-written rather than matplotlib's SVG so the markup carries ``role="img"``,
``<title>``/``<desc>`` with page-unique ids, per-cell tooltips and text that
follows the page's colour (``currentColor``, so dark themes work), and so the
bytes are identical for the same input.
"""

from __future__ import annotations

from typing import Any

from . import svg
from .colors import Scale, make_scale
from .describe import fmt

FONT = 13
CELL_W, CELL_H = 56, 30
PAD = 8
BAR_W = 16
CHAR_W = 0.62 * FONT


def _width(label: str) -> float:
    return len(label) * CHAR_W


def heatmap_svg(data: dict[str, Any], *, title: str, alt: str, colormap: str | None,
                scale: Scale | None = None) -> str:
    """The SVG markup; ids use :data:`svg.ID_TOKEN` as their prefix. ``scale``: a colour scale
    shared with other figures (a sweep), instead of one fitted to this data."""
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
    tid = svg.ID_TOKEN
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="tv-svg-heatmap" role="img" '
        f'aria-labelledby="{tid}-title {tid}-desc" viewBox="0 0 {svg.num(width)} {svg.num(height)}" '
        f'width="{svg.num(width)}" height="{svg.num(height)}" font-size="{FONT}" '
        f'font-family="system-ui, sans-serif">',
        f'<title id="{tid}-title">{svg.text(title)}</title>',
        f'<desc id="{tid}-desc">{svg.text(alt)}</desc>',
        '<g class="tv-labels" fill="currentColor">',
    ]
    for i, label in enumerate(rows):
        y = top + CELL_H * i + CELL_H / 2
        out.append(f'<text x="{svg.num(left - 8)}" y="{svg.num(y)}" text-anchor="end" '
                   f'dominant-baseline="central">{svg.text(label)}</text>')
    for j, label in enumerate(cols):
        x = left + CELL_W * j + CELL_W / 2
        if rotate:
            out.append(f'<text transform="translate({svg.num(x)},{svg.num(top - 6)}) rotate(-45)" '
                       f'text-anchor="start">{svg.text(label)}</text>')
        else:
            out.append(f'<text x="{svg.num(x)}" y="{svg.num(top - 6)}" text-anchor="middle">{svg.text(label)}</text>')
    out.append("</g>")
    out.append('<g class="tv-cells">')
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            x, y = left + CELL_W * j, top + CELL_H * i
            out.append(
                f'<rect x="{svg.num(x)}" y="{svg.num(y)}" width="{CELL_W}" height="{CELL_H}" '
                f'fill="{scale.color(value)}"><title>{svg.text(f"{rows[i]}, {cols[j]}: {fmt(value)}")}</title></rect>'
            )
            if show_values:
                out.append(
                    f'<text x="{svg.num(x + CELL_W / 2)}" y="{svg.num(y + CELL_H / 2)}" text-anchor="middle" '
                    f'dominant-baseline="central" font-size="12" fill="{scale.text_color(value)}">{fmt(value, 2)}</text>'
                )
    out.append(f'<rect x="{svg.num(left)}" y="{svg.num(top)}" width="{grid_w}" height="{grid_h}" '
               f'fill="none" stroke="currentColor" stroke-opacity="0.6"/>')
    out.append("</g>")
    out.extend(_colour_bar(scale, bar_x, top, bar_h, data.get("unit", ""), tick_labels))
    out.append("</svg>")
    return "\n".join(out)


def _ticks(scale: Scale) -> list[float]:
    middle = 0.0 if scale.diverging else (scale.low + scale.high) / 2
    return [scale.high, middle, scale.low]


def _colour_bar(scale: Scale, x: float, top: float, height: float, unit: str, labels: list[str]) -> list[str]:
    tid = svg.ID_TOKEN
    stops = "".join(
        f'<stop offset="{k / 10:.1f}" stop-color="{scale.color(scale.high - (scale.high - scale.low) * k / 10)}"/>'
        for k in range(11)
    )
    out = [
        f'<defs><linearGradient id="{tid}-bar" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient></defs>',
        '<g class="tv-colour-bar" fill="currentColor">',
        f'<rect x="{svg.num(x)}" y="{svg.num(top)}" width="{BAR_W}" height="{svg.num(height)}" '
        f'fill="url(#{tid}-bar)" stroke="currentColor" stroke-opacity="0.6"/>',
    ]
    for label, frac in zip(labels, (0.0, 0.5, 1.0)):
        y = top + height * frac
        out.append(f'<line x1="{svg.num(x + BAR_W)}" x2="{svg.num(x + BAR_W + 5)}" y1="{svg.num(y)}" '
                   f'y2="{svg.num(y)}" stroke="currentColor"/>')
        out.append(f'<text x="{svg.num(x + BAR_W + 8)}" y="{svg.num(y)}" dominant-baseline="central">'
                   f'{svg.text(label)}</text>')
    if unit:
        label_x = x + BAR_W + 8 + max(_width(t) for t in labels) + 10 + FONT / 2
        cy = top + height / 2
        out.append(f'<text transform="translate({svg.num(label_x)},{svg.num(cy)}) rotate(90)" '
                   f'text-anchor="middle">{svg.text(unit)}</text>')
    out.append("</g>")
    return out
