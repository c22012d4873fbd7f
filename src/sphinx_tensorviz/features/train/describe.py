"""Words for a training run: the alt text states each curve in words, as a reader would see it.

"loss falls from 4.2 to 0.31, most steeply between steps 300 and 600": the start and end values,
the direction, and where the change is fastest (the window of a fifth of the run with the largest
change in the curve's direction). Generated from the data when the author gives no ``:alt:``.
"""

from __future__ import annotations

from typing import Any

from ...core.i18n import _, counted
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
        return _("{metric} stays near {value}").format(metric=metric, value=fmt(start, 3))
    falling = end < start
    moves = _("{metric} falls from {start} to {end}") if falling else _("{metric} rises from {start} to {end}")
    sentence = moves.format(metric=metric, start=fmt(start, 3), end=fmt(end, 3))
    window = steepest(points, falling)
    if window:
        sentence += _(", most steeply between steps {first} and {last}").format(first=window[0], last=window[1])
    if lowest < min(start, end) - 1e-3 * scale:
        sentence += " " + _("(lowest {value})").format(value=fmt(lowest, 3))
    return sentence


def train_alt(data: dict[str, Any]) -> str:
    """What the chart shows, in words."""
    clauses = "; ".join(curve_sentence(c) for c in data["curves"])
    text = _("Training curves over {steps}: {clauses}.").format(steps=counted(data["steps"], "step", "steps"),
                                                                 clauses=clauses)
    if data.get("diverged"):
        d = data["diverged"]
        text += " " + _("The run diverged at step {step} ({metric} became {value}) and stopped there.").format(
            step=d["step"], metric=d["metric"], value=d["value"])
    return text


def long_description(data: dict[str, Any]) -> str:
    """How to read the chart; the data table follows it on the page."""
    kept = [str(s["step"]) for s in data["snapshots"]]
    marks = (" " + _("Dashed lines mark the steps whose weights were kept: {steps}.").format(steps=", ".join(kept))
             if kept else "")
    counts = "; ".join(_("{metric}: {points} of {logged:,} logged").format(
        metric=c["metric"], points=counted(len(c["points"]), "point", "points"), logged=c["logged"])
        for c in data["curves"])
    return (_("One panel per logged metric, with the step (0 to {steps:,}) across and the value up.").format(
        steps=data["steps"]) + marks + " "
        + _("Points shown ({counts}); long runs are thinned evenly, keeping the first, the last and the "
            "minimum.").format(counts=counts))
