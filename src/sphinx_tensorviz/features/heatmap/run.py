"""The worker's entry for ``tv-heatmap``: the lesson's 2-D result as heatmap data.

Named in :data:`sphinx_tensorviz.core.protocol.RUNNERS`; runs in the worker process only.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ...core.limits import Limits, check_heatmap_cells
from ...core.protocol import Job
from ...execute.worker.checks import code_name, run_checks
from ...execute.worker.loader import BadResult, seeded_arguments
from ...execute.worker.results import heatmap_data


def run_heatmap(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The 2-D result as heatmap data; checks receive the values as a NumPy array."""
    limits = Limits.from_job(job.limits)
    data = heatmap_data(call_entry(module, job), job.options, lambda r, c: check_heatmap_cells(r, c, limits))
    produced: dict[str, Any] = {"data": data}
    if job.options.get("checks"):
        produced["checks"] = run_checks(module, job.options["checks"], np.asarray(data["values"]),
                                       code=code_name(job))
    return produced


def call_entry(module: types.ModuleType, job: Job) -> Any:
    """The code's module-level ``result``, or the named function called with the author's inputs
    (plus ``seed``/``key`` if it asks for them)."""
    if not job.function:
        if "result" not in module.__dict__:
            raise BadResult("the code defines no 'result' variable; name a function with :function:")
        return module.__dict__["result"]
    function = getattr(module, job.function, None)
    if not callable(function):
        raise BadResult(f"no function named {job.function!r} in {job.entry}")
    inputs = job.inputs if isinstance(job.inputs, dict) else {}
    return function(**seeded_arguments(function, inputs, job.seed, job.backend))
