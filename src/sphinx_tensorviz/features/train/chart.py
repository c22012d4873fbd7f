"""The recorded curves as a line chart: one panel per metric, on a shared step axis.

One :class:`~...render.shapes.Drawing` serves both outputs: the page's SVG
(:func:`~...render.svg_writer.write`) and the LaTeX PDF (:mod:`.pdf`). Each panel has a labelled
y axis with ticks, the metric's name, and dashed marks at the snapshot steps; the step axis is
labelled under the last panel. Text follows the page's colour (``currentColor``), so dark themes work.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ...core.i18n import _
from ...render import svg
from ...render.numbers import fmt
from ...render.shapes import Drawing, Group, Line, Paint, Path, Rect, Shape, Text

FONT = 13
WIDTH = 600
PANEL_H = 170
LEFT, RIGHT, TOP, GAP, BOTTOM = 72, 20, 28, 44, 48
LINE_COLOUR = "#1f5fbf"  # 6.2:1 on white; the panels' frame and text use the page's colour
FONT_FAMILY = "system-ui, sans-serif"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round numbers (1, 2 or 5 times a power of ten apart) covering ``low`` to ``high``."""
    if not high > low:
        spread = abs(low) * 0.1 or 1.0
        low, high = low - spread, high + spread
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= step * factor:
            step *= factor
            break
    first, last = math.floor(low / step), math.ceil(high / step)
    return [round(k * step, 12) for k in range(first, last + 1)]


def step_label(step: float) -> str:
    """A step as a tick says it: ``60``, ``2,500``, ``200k``, ``1.5M``."""
    if step >= 1_000_000 and step % 100_000 == 0:
        return f"{step / 1_000_000:g}M"
    if step >= 10_000 and step % 1_000 == 0:
        return f"{step / 1_000:g}k"
    return f"{int(step):,}"


def chart_drawing(data: dict[str, Any], *, title: str, alt: str) -> Drawing:
    """The chart of ``data["curves"]`` over ``0`` to ``data["steps"]``."""
    steps = data["steps"]
    x_ticks = [t for t in nice_ticks(0, steps) if 0 <= t <= steps]
    plot_w = WIDTH - LEFT - RIGHT
    x_of = lambda step: LEFT + plot_w * step / steps  # noqa: E731
    panels: list[Shape] = []
    top = TOP
    for curve in data["curves"]:
        panels.append(_panel(curve, top, x_of, plot_w, data))
        top += PANEL_H + GAP
    bottom = top - GAP
    axis: list[Shape] = [Line(LEFT, bottom, LEFT + plot_w, bottom)]
    for tick in x_ticks:
        axis.append(Line(x_of(tick), bottom, x_of(tick), bottom + 5))
        axis.append(Text(x_of(tick), bottom + 8 + FONT, step_label(tick), anchor="middle"))
    axis.append(Text(LEFT + plot_w / 2, bottom + 14 + 2 * FONT, _("step"), anchor="middle"))
    return Drawing(width=WIDTH, height=bottom + BOTTOM, title=title, desc=alt, id_prefix=svg.ID_TOKEN,
                   cls="tv-svg-train", font_family=FONT_FAMILY, font_size=FONT, compact=True,
                   children=(*panels, Group(tuple(axis), cls="tv-step-axis", fill="currentColor")))


def _panel(curve: dict[str, Any], top: float, x_of: Callable[[float], float], plot_w: float,
           data: dict[str, Any]) -> Group:
    """One metric's panel: frame, y ticks and label, snapshot marks, the curve, a divergence note."""
    values = [v for _, v in curve["points"]]
    ticks = nice_ticks(min(values), max(values), 4)
    low, high = ticks[0], ticks[-1]
    y_of = lambda value: top + PANEL_H * (high - value) / (high - low)  # noqa: E731
    shapes: list[Shape] = [Rect(LEFT, top, plot_w, PANEL_H, Paint(fill="none", stroke="currentColor",
                                                                   stroke_opacity=0.5))]
    for tick in ticks:
        shapes.append(Line(LEFT - 5, y_of(tick), LEFT, y_of(tick)))
        shapes.append(Text(LEFT - 8, y_of(tick), fmt(tick), anchor="end", baseline="central"))
    shapes.append(Text(LEFT - 56, top + PANEL_H / 2, curve["metric"], anchor="middle", rotate=-90))
    for snapshot in data["snapshots"]:
        x = x_of(snapshot["step"])
        shapes.append(Path((("M", (x, top)), ("L", (x, top + PANEL_H))),
                           Paint(fill="none", stroke="currentColor", stroke_opacity=0.35, dash="4 4"),
                           cls="tv-snapshot"))
    points = curve["points"]
    segments = tuple((("M" if i == 0 else "L"), (x_of(s), y_of(v))) for i, (s, v) in enumerate(points))
    shapes.append(Path(segments, Paint(fill="none", stroke=LINE_COLOUR, stroke_width=2), cls="tv-curve",
                       attrs=(("data-metric", curve["metric"]),)))
    shapes.append(Text(LEFT + 6, top - 8, curve["metric"], weight="bold"))
    diverged = data.get("diverged")
    if diverged and diverged["metric"] == curve["metric"]:
        x = x_of(diverged["step"])
        shapes.append(Text(min(x, LEFT + plot_w - 4), top + FONT + 4, f"diverged ({diverged['value']}) at step "
                           f"{diverged['step']}", anchor="end"))
    return Group(tuple(shapes), cls="tv-panel", fill="currentColor")
