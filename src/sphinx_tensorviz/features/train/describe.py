"""Words for a training run: the alt text states each curve in words, as a reader would see it.

"loss falls from 4.2 to 0.31, most steeply between steps 300 and 600": the start and end values,
the direction, and where the change is fastest (the window of a fifth of the run with the largest
change in the curve's direction). Generated from the data when the author gives no ``:alt:``.
"""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from ...render.numbers import fmt

#: the share of the run over which "most steeply" is measured
WINDOW = 0.2


def _value_at(points: list[list[float]], step: float) -> float:
    """The curve's value at ``step``, linearly between recorded points."""
    if step <= points[0][0]:
        return points[0][1]
    for (s0, v0), (s1, v1) in zip(points, points[1:]):
        if s0 <= step <= s1:
            return v0 if s1 == s0 else v0 + (v1 - v0) * (step - s0) / (s1 - s0)
    return points[-1][1]


def steepest(points: list[list[float]], falling: bool) -> tuple[int, int] | None:
    """The window (first step, last step) with the largest change in the curve's direction."""
    first, last = points[0][0], points[-1][0]
    width = (last - first) * WINDOW
    if width <= 0 or len(points) < 3:
        return None
    starts = sorted({p[0] for p in points if p[0] + width <= last} | {first})
    sign = -1 if falling else 1

    def change(start: float) -> float:
        return sign * (_value_at(points, start + width) - _value_at(points, start))

    best = max(starts, key=change)
    return round(best), round(best + width)


def curve_sentence(curve: dict[str, Any]) -> str:
    """One clause about one metric."""
    points = curve["points"]
    metric, start, end = curve["metric"], points[0][1], points[-1][1]
    lowest = min(v for _, v in points)
    scale = max(abs(start), abs(end), 1e-12)
    if abs(end - start) <= 1e-3 * scale:
        return f"{metric} stays near {fmt(start, 3)}"
    falling = end < start
    verb = "falls" if falling else "rises"
    sentence = f"{metric} {verb} from {fmt(start, 3)} to {fmt(end, 3)}"
    window = steepest(points, falling)
    if window:
        sentence += f", most steeply between steps {window[0]} and {window[1]}"
    if lowest < min(start, end) - 1e-3 * scale:
        sentence += f" (lowest {fmt(lowest, 3)})"
    return sentence


def train_alt(data: dict[str, Any]) -> str:
    """What the chart shows, in words."""
    clauses = "; ".join(curve_sentence(c) for c in data["curves"])
    text = f"Training curves over {plural(data['steps'], 'step')}: {clauses}."
    if data.get("diverged"):
        d = data["diverged"]
        text += f" The run diverged at step {d['step']} ({d['metric']} became {d['value']}) and stopped there."
    return text


def long_description(data: dict[str, Any]) -> str:
    """How to read the chart; the data table follows it on the page."""
    kept = [str(s["step"]) for s in data["snapshots"]]
    marks = f" Dashed lines mark the steps whose weights were kept: {', '.join(kept)}." if kept else ""
    counts = "; ".join(f"{c['metric']}: {plural(len(c['points']), 'point')} of {c['logged']:,} logged"
                       for c in data["curves"])
    return (f"One panel per logged metric, with the step (0 to {data['steps']:,}) across and the value up.{marks} "
            f"Points shown ({counts}); long runs are thinned evenly, keeping the first, the last and the minimum.")
