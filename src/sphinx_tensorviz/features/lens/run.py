"""The worker's entry for ``tv-lens``: build the model, find its pieces, keep every block's output in
one forward pass, read each out as a prediction, and run the lesson's checks on the probabilities.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker only.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

import numpy as np

from ...core.kinds import worker_entry
from ...core.limits import LimitExceeded, Limits
from ...core.protocol import Job
from ...execute.worker.checks import check_modules, code_name, run_checks
from ...execute.worker.lm_inputs import build_model, model_call, project_function, token_ids, token_labels
from ...execute.worker.loader import BadResult
from ...execute.worker.results import to_numpy
from . import CELLS, DEFAULT_CELLS
from .agreement import check_last_row
from .checks import cells_problem
from .data import lens_data
from .pieces import lens_parts, pieces_found, pieces_words


class LensProbabilities(np.ndarray):
    """What a ``:checks:`` function receives: the target's probability ``[layers, positions]`` (the
    drawn positions, in order), carrying ``top1`` (the top-1 token id of each cell, same shape),
    ``targets`` (the target id of each position) and ``positions`` (the input position of each column)."""

    top1: np.ndarray
    targets: list[int]
    positions: list[int]


@worker_entry
def run_lens(module: types.ModuleType, job: Job) -> dict[str, Any]:
    ids = token_ids(job.options)
    if ids is None:
        raise BadResult(":inputs: gives the token ids, e.g. [5, 3, 9, 5, 3]")
    model = build_model(module, job)
    parts = lens_parts(model, job)
    logits, dtype, output = read_out(model, parts, job)
    arrays = [to_numpy(layer) for layer in logits]
    check_last_row(arrays[-1], output, dtype, pieces_words(parts))
    limit = Limits.from_job(job.limits).figures.get(CELLS, DEFAULT_CELLS)

    def check_size(layers: int, positions: int) -> None:
        problem = cells_problem(layers, positions, limit)
        if problem:
            raise LimitExceeded(problem, CELLS)

    data, chosen, top1 = lens_data(arrays, dtype, ids, token_labels(job, len(ids)),
                                   job.options, vocabulary(job), pieces_found(model, parts, job), check_size)
    produced: dict[str, Any] = {"data": data}
    if job.options.get("checks"):
        given = chosen.view(LensProbabilities)
        given.top1, given.targets, given.positions = top1, data["targets"], data["positions"]
        produced["checks"] = run_checks(module, job.options["checks"], given, check_modules(job), code_name(job))
    return produced


def read_out(model: Any, parts: Any, job: Job) -> tuple[list[Any], str, Any]:
    """Every layer's logits ``[T, V]`` by the backend's capture, their dtype and the model's output."""
    if job.backend == "torch":
        from .lens_torch import torch_lens

        args, kwargs = model_call(job.options, job.backend, job.seed)
        return torch_lens(model, parts, args, kwargs)
    if job.options.get("call_args"):
        raise BadResult(":call-args: are only for PyTorch models")
    from .lens_jax import jax_lens

    return jax_lens(model, parts, token_ids(job.options) or [])


def vocabulary(job: Job) -> Any:
    """``:vocabulary:`` as ``ids -> labels`` (``None``: the ids are the labels)."""
    reference = job.options.get("vocabulary")
    if not reference:
        return None
    function = project_function(job, reference, "vocabulary")
    if len(inspect.signature(function).parameters) != 1:
        raise BadResult(f":vocabulary: {reference} must take one argument, the list of token ids")
    return function
