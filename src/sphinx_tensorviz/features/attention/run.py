"""The worker's entry for ``tv-attention``: build the model, run one forward pass, keep every layer's
attention weights, and run the lesson's checks on them.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker only.
"""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from ...core.kinds import worker_entry
from ...core.limits import LimitExceeded, Limits
from ...core.protocol import Job
from ...execute.worker.checks import check_modules, code_name, run_checks
from ...execute.worker.lm_inputs import build_model, model_call, token_ids, token_labels
from ...execute.worker.loader import BadResult
from . import CELLS, DEFAULT_CELLS
from .checks import cells_problem
from .data import attention_data, layer_maps


@worker_entry
def run_attention(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The weights of every chosen layer and head; checks receive them as an array
    ``[maps, T, T]`` in the order of ``data["maps"]``."""
    model = build_model(module, job)
    args, kwargs = model_call(job.options, job.backend, job.seed)
    found = capture(model, args, kwargs, job.backend)
    ids = token_ids(job.options)
    maps, dtype = layer_maps(found, len(ids) if ids else None)
    limit = Limits.from_job(job.limits).figures.get(CELLS, DEFAULT_CELLS)

    def check_size(count: int, tokens: int) -> None:
        problem = cells_problem(count, tokens, limit)
        if problem:
            raise LimitExceeded(problem, CELLS)

    data = attention_data(maps, dtype, token_labels(job, maps[0].shape[-1]), job.options, check_size)
    produced: dict[str, Any] = {"data": data}
    if job.options.get("checks"):
        weights = np.asarray([item["weights"] for item in data["maps"]])
        produced["checks"] = run_checks(module, job.options["checks"], weights, check_modules(job), code_name(job))
    return produced


def capture(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], backend: str) -> list[Any]:
    """Each attention call's weights, by the backend's capture."""
    if backend == "torch":
        from .capture_torch import torch_attention

        return torch_attention(model, args, kwargs)
    if kwargs:
        raise BadResult("named :inputs: and :call-args: are only for PyTorch models; give JAX inputs in order")
    from .capture_jax import TracedAttention, jax_attention

    try:
        return jax_attention(model, args)
    except TracedAttention as exc:
        raise BadResult(str(exc)) from None
