"""Recorded curves, bounded however long the run: a metric keeps at most :data:`MAX_POINTS` points.

A million ``log.step`` calls must not become a million points in a committed artifact (nor a
million-point SVG). Each curve keeps every ``stride``-th value logged: whenever it holds twice the
bound, every other point is dropped and the stride doubles, so the points stay evenly spread over
the whole run (O(1) per call on average); at the end they are cut to :data:`MAX_POINTS` evenly
spaced points. The first point, the last and the minimum are always kept: they are what
a reader (and a claim like "loss below 0.5") looks for. Pure Python: the worker uses it, and so can
a test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: the most points a stored curve holds (per metric); the page's table lists them all
MAX_POINTS = 400

Point = tuple[int, float]


@dataclass
class Curve:
    """One metric's points as they come, thinned to stay under twice :data:`MAX_POINTS`."""

    metric: str
    points: list[Point] = field(default_factory=list)
    logged: int = 0  #: how many values were logged in all
    stride: int = 1  #: ``points`` holds the values logged at multiples of it (counting from 0)
    lowest: Point | None = None
    last: Point | None = None

    def add(self, step: int, value: float) -> None:
        point = (step, value)
        self.last = point
        if self.lowest is None or value < self.lowest[1]:
            self.lowest = point
        if self.logged % self.stride == 0:
            self.points.append(point)
            if len(self.points) >= 2 * MAX_POINTS:
                self.points, self.stride = self.points[::2], self.stride * 2
        self.logged += 1

    def stored(self) -> list[Point]:
        """At most :data:`MAX_POINTS` points: evenly spaced, with the first, the minimum and the last."""
        return downsample(self.points, MAX_POINTS, extra=[p for p in (self.lowest, self.last) if p is not None])


def downsample(points: list[Point], limit: int, extra: list[Point] | None = None) -> list[Point]:
    """``points`` (and ``extra``, points that must stay) cut to at most ``limit`` by even spacing,
    keeping the first, the last and every point of ``extra``; in step order."""
    every = sorted(set(points) | set(extra or []))
    if len(every) <= limit:
        return every
    must = {every[0], every[-1], *(extra or [])}
    room = max(limit - len(must), 0)
    spaced = {every[round(i * (len(every) - 1) / (room + 1))] for i in range(1, room + 1)} if room else set()
    return sorted(must | spaced)
