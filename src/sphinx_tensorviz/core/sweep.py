"""A swept figure as every stage sees it: its parameters, one request per point, the check job.

Read by ``read/`` (which builds it from ``:sweep:``), the execution phase (which runs the
points and the cross-sweep check) and ``render/`` (which draws the points). Picklable, so
``sphinx-build -j`` can merge it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kinds import FigureKind, declare
from .request import ExecutionRequest

#: The directive name of a cross-sweep check job.
SWEEP_CHECK = "tv-sweep-check"

#: A cross-sweep check records checks over a sweep's stored points: an artifact kind that is no
#: figure of its own (the swept kind draws it with its points), run by the execution stage's worker.
SWEEP_CHECK_KIND = declare(FigureKind(
    name="sweep-check",
    directive=SWEEP_CHECK,
    run="sphinx_tensorviz.execute.worker.sweep_check:run_sweep_check",
    schema="sphinx_tensorviz.store:schemas/sweep-check.schema.json",
    compare="sphinx_tensorviz.execute.sweep_check_compare:compare",
))


@dataclass(frozen=True)
class SweepPoint:
    values: dict[str, Any]  #: parameter -> value at this point
    request: ExecutionRequest

    @property
    def label(self) -> str:
        """``temperature = 0.5`` (``, ``-joined for two parameters)."""
        return ", ".join(f"{name} = {value_text(value)}" for name, value in self.values.items())


@dataclass(frozen=True)
class Sweep:
    """Everything a swept figure shows; picklable, so ``-j`` can merge it."""

    parameters: dict[str, list[Any]]
    points: tuple[SweepPoint, ...]
    check: ExecutionRequest | None = None  #: the cross-sweep check job, if any

    def requests(self) -> list[ExecutionRequest]:
        return [p.request for p in self.points] + ([self.check] if self.check else [])


def value_text(value: Any) -> str:
    """How a value reads on the page: ``0.25``, ``4``, ``relu``, ``true``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def is_numeric(values: list[Any]) -> bool:
    """Numbers get a range slider; anything else (names, booleans) a select."""
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
