"""The worker's entry for ``tv-patch``: build the model, find its pieces, run the batched patching,
normalise the effects and run the lesson's checks on them.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker only.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.kinds import worker_entry
from ...core.limits import LimitExceeded, Limits
from ...core.protocol import Job
from ...execute.worker.causal_lm import PartNames, PartsNotFound, find_parts
from ...execute.worker.checks import check_modules, code_name, run_checks
from ...execute.worker.lm_inputs import build_model, project_function, token_labels
from ...execute.worker.loader import BadResult
from . import DEFAULT_PASSES, PASSES
from .checks import passes_problem
from .data import patch_data
from .metric import built_in_tokens, logit_diff
from .patch_torch import PatchError, patch_model

#: the options that name a model's pieces, as :class:`PartNames` fields
NAMED_PARTS = ("residual", "attention", "mlp", "head_input")


@worker_entry
def run_patch(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The normalised effect of every patched place; checks receive them as an array
    ``[layers, positions]`` (or ``[layers, heads]``) in the order of ``data["effects"]``."""
    options = job.options
    model = build_model(module, job)
    if hasattr(model, "eval"):
        model.eval()  # dropout would make every patched run differ from the clean one by chance
    names = {name: options[name] for name in NAMED_PARTS if name in options}
    try:
        layers, across, patch = prepared(model, names, job)
        problem = passes_problem(layers, across, options["patch"],
                                 Limits.from_job(job.limits).figures.get(PASSES, DEFAULT_PASSES))
        if problem:
            raise LimitExceeded(problem, PASSES)
        found = patch(metric_function(job))
    except (PatchError, PartsNotFound) as exc:
        raise BadResult(str(exc)) from None
    data = patch_data(found, options, *input_labels(job))
    named = metric_token_labels(job)
    if named:
        data["metricTokens"] = named
    produced: dict[str, Any] = {"data": data}
    if options.get("checks"):
        produced["checks"] = run_checks(module, options["checks"], np.asarray(data["effects"]),
                                        check_modules(job), code_name(job))
    return produced


def prepared(model: Any, names: dict[str, str], job: Job) -> tuple[int, int, Callable[[Any], dict[str, Any]]]:
    """(layers, positions or heads, the patching as a function of the metric) for the job's backend:
    PyTorch finds the pieces (``names`` override), JAX takes them from ``names``."""
    options = job.options
    clean, corrupted, patch = options["clean"], options["corrupted"], options["patch"]
    if job.backend == "jax":
        if options.get("call_args"):
            raise BadResult(":call-args: are only for PyTorch models")
        from .patch_jax import jax_sites, patch_jax_model

        paths, heads = jax_sites(model, names, patch)
        return len(paths), heads or len(clean), lambda metric: patch_jax_model(model, names, patch, clean, corrupted,
                                                                               metric)
    parts = find_parts(model, PartNames(**names))
    across = (parts.heads or 0) if patch == "heads" else len(clean)
    return len(parts.layers), across, lambda metric: patch_model(model, parts, patch, clean, corrupted, metric,
                                                                 dict(options.get("call_args") or {}))


def metric_function(job: Job) -> Callable[[Any], Any]:
    """``:metric:`` as a function of one input's logits ``[positions, vocabulary]``."""
    spec = job.options["metric"]
    pair = built_in_tokens(spec)
    if pair is None:
        return project_function(job, spec, "metric")
    return lambda logits: logit_diff(logits, *pair)


def input_labels(job: Job) -> tuple[list[str], list[str]]:
    """The labels of the clean and the corrupted input: a ``:tokens:`` function labels each; a list
    labels the clean input, and the corrupted one keeps them where its ids are the same (else its ids)."""
    clean, corrupted = job.options["clean"], job.options["corrupted"]
    clean_labels = token_labels(job, len(clean), clean)
    if isinstance(job.options.get("tokens"), list):
        return clean_labels, [label if a == b else str(b) for label, a, b in zip(clean_labels, clean, corrupted)]
    return clean_labels, token_labels(job, len(corrupted), corrupted)


def metric_token_labels(job: Job) -> list[str] | None:
    """The labels of ``logit-diff A B``'s two tokens, from a ``:tokens:`` function that takes ``ids``
    (a list labels positions, not the vocabulary); ``None``: the words give the ids."""
    pair, spec = built_in_tokens(job.options["metric"]), job.options.get("tokens")
    if pair is None or not isinstance(spec, str):
        return None
    if "ids" not in inspect.signature(project_function(job, spec, "tokens")).parameters:
        return None
    return token_labels(job, 2, list(pair))
