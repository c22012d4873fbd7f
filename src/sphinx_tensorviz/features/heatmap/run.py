"""The worker's entry for ``tv-heatmap``: the lesson's 2-D result as heatmap data.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker only.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ...core.kinds import worker_entry
from ...core.limits import LimitExceeded, Limits
from ...core.protocol import Job
from ...execute.worker.checks import code_name, run_checks
from ...execute.worker.loader import lesson_value
from . import CELLS, DEFAULT_CELLS
from .checks import cells_problem
from .data import heatmap_data


@worker_entry
def run_heatmap(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The 2-D result as heatmap data; checks receive the values as a NumPy array."""
    limit = Limits.from_job(job.limits).figures.get(CELLS, DEFAULT_CELLS)

    def check_shape(rows: int, columns: int) -> None:
        problem = cells_problem(rows, columns, limit)
        if problem:
            raise LimitExceeded(problem, CELLS)

    data = heatmap_data(lesson_value(module, job), job.options, check_shape)
    produced: dict[str, Any] = {"data": data}
    if job.options.get("checks"):
        produced["checks"] = run_checks(module, job.options["checks"], np.asarray(data["values"]),
                                       code=code_name(job))
    return produced

