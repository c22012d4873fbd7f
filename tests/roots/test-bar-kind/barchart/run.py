"""The worker's entry: the lesson's 1-D result as bar data (runs in the worker only)."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from sphinx_tensorviz.core.kinds import worker_entry
from sphinx_tensorviz.core.limits import LimitExceeded, Limits
from sphinx_tensorviz.core.protocol import Job
from sphinx_tensorviz.execute.worker.loader import BadResult, lesson_value
from sphinx_tensorviz.execute.worker.results import dtype_name, to_numpy

from . import BARS, DEFAULT_BARS
from .checks import bars_problem


@worker_entry
def run_bar(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The lesson's value as ``{"kind": "bar", "values", "labels", "unit", "dtype"}``; the size limit is
    checked before the values are copied, so a huge result costs its shape only."""
    value = lesson_value(module, job)
    values = to_numpy(value)
    if values.ndim != 1 or values.size == 0:
        raise BadResult(f"a bar chart needs a non-empty 1-D array, got shape {tuple(values.shape)}")
    problem = bars_problem(values.size, Limits.from_job(job.limits).figures.get(BARS, DEFAULT_BARS))
    if problem:
        raise LimitExceeded(problem, BARS)
    if not np.isfinite(values).all():
        raise BadResult("some values are NaN or infinite")
    labels = bar_labels(job.options.get("labels"), values.size)
    return {"data": {"kind": "bar", "values": values.tolist(), "labels": labels, "unit": job.options.get("unit") or "",
                     "dtype": dtype_name(value)}}


def bar_labels(spec: Any, count: int) -> list[str]:
    """The ``:labels:`` list, or its pattern (``token {i}``) filled in for each bar."""
    if isinstance(spec, list):
        if len(spec) != count:
            raise BadResult(f"{len(spec)} labels given for {count} bars")
        return [str(label) for label in spec]
    try:
        return [str(spec or "bar {i}").format(i=i) for i in range(count)]
    except (KeyError, IndexError, ValueError) as exc:
        raise BadResult(f"bad :labels: pattern {spec!r} ({exc}): write {{i}} for the bar's number") from None
