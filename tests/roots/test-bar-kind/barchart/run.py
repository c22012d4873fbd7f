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
    value = lesson_value(module, job)
    values = to_numpy(value)
    if values.ndim != 1 or values.size == 0:
        raise BadResult(f"a bar chart needs a non-empty 1-D array, got shape {tuple(values.shape)}")
    problem = bars_problem(values.size, Limits.from_job(job.limits).figures.get(BARS, DEFAULT_BARS))
    if problem:  # before the values are copied into the result
        raise LimitExceeded(problem, BARS)
    if not np.isfinite(values).all():
        raise BadResult("some values are NaN or infinite")
    labels = job.options.get("labels") or "bar {i}"
    if isinstance(labels, str):
        labels = [labels.format(i=i) for i in range(values.size)]
    if len(labels) != values.size:
        raise BadResult(f"{len(labels)} labels for {values.size} values")
    return {"data": {"kind": "bar", "values": values.tolist(), "labels": [str(label) for label in labels],
                     "unit": job.options.get("unit", ""), "dtype": dtype_name(value)}}
