"""Compare a recorded artifact's arrays with a re-run of its code, within dtype-aware tolerances.

Used by ``tensorviz verify``; each figure kind says which of its arrays and fields to compare
(:attr:`~..core.kinds.FigureKind.compare`) through :class:`Comparison`. A tolerance is derived per
array from the dtype it was computed in and its largest magnitude (:mod:`.tolerance`): float32
results differ in the last bits between CPUs, so a bit-exact check would fail on every machine but
the recording one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..core.words import plural
from .tolerance import ASSUMED_DTYPE, default_tolerance, within


@dataclass(frozen=True)
class Group:
    """One array compared: where it lives, its dtype, and the tolerance used for it."""

    where: str
    dtype: str
    count: int
    rtol: float
    atol: float
    assumed: bool  #: the artifact did not record the dtype

    def describe(self) -> str:
        note = " (dtype not recorded: compared as float32)" if self.assumed else ""
        return f"{plural(self.count, f'{self.dtype} value')} in {self.where} within rtol={self.rtol:.2g}, atol={self.atol:.2g}{note}"


@dataclass
class Comparison:
    """Differences found between a stored and a recomputed ``data`` (and checks).

    ``rtol``/``atol`` override the tolerances that are otherwise derived per array from the
    dtype it was computed in and its largest magnitude (:mod:`..execute.tolerance`).
    """

    rtol: float | None = None
    atol: float | None = None
    problems: list[str] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    largest: float = 0.0
    where: str = ""

    @property
    def compared(self) -> int:
        return sum(g.count for g in self.groups)

    def array(self, old: Any, new: Any, where: str, dtype: str | None) -> None:
        """Compare one recorded array (nested lists of numbers) with its re-run."""
        if _shape(old) != _shape(new):
            self.problems.append(f"{where}: shape differs ({_shape(old)} stored, {_shape(new)} now)")
            return
        pairs = [(index, a, b) for (index, a), (_, b) in zip(_flat(old), _flat(new))]
        largest = max((abs(float(a)) for _, a, _ in pairs), default=0.0)
        rtol, atol = default_tolerance(dtype or ASSUMED_DTYPE, largest)
        rtol = rtol if self.rtol is None else self.rtol
        atol = atol if self.atol is None else self.atol
        self.groups.append(Group(where, dtype or ASSUMED_DTYPE, len(pairs), rtol, atol, dtype is None))
        for index, a, b in pairs:
            diff = abs(float(b) - float(a))
            if not math.isfinite(diff):
                diff = math.inf
            if diff > self.largest or (diff == self.largest and not self.where):
                self.largest, self.where = diff, f"{where}{index}: stored {a!r}, now {b!r}"
            if not within(float(a), float(b), rtol, atol):
                self.problems.append(f"{where}{index}: stored {a!r}, now {b!r} (difference {diff:.3g}, "
                                     f"allowed {atol + rtol * abs(float(a)):.3g} for {dtype or ASSUMED_DTYPE})")

    def equal(self, old: Any, new: Any, what: str) -> None:
        if old != new:
            self.problems.append(f"{what} differs: stored {_brief(old)}, now {_brief(new)}")


def _flat(value: Any, index: str = "") -> list[tuple[str, Any]]:
    """``(index, number)`` pairs of nested lists, indexed like ``[1][2]``."""
    if isinstance(value, list):
        return [pair for n, item in enumerate(value) for pair in _flat(item, f"{index}[{n}]")]
    return [(index, value)]


def _shape(value: Any) -> str:
    dims = []
    while isinstance(value, list):
        dims.append(len(value))
        value = value[0] if value else None
    return "x".join(map(str, dims)) or "scalar"


def _brief(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
