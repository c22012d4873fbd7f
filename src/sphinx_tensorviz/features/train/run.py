"""The worker's entry for ``tv-train``: build the model, run the author's loop, return the record.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker
only. Returns the curves and the snapshot list as ``data``, and the snapshots' safetensors files as
returned files (the build moves them into the store's ``weights/``).
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

from ...core.kinds import worker_entry
from ...core.limits import Limits
from ...core.protocol import Job
from ...execute.worker.checks import run_checks
from ...execute.worker.loader import BadResult, import_file, seeded_arguments
from . import DEFAULT_WEIGHTS_MB, WEIGHTS_MB
from .recorder import Diverged, TrainingLog


@worker_entry
def run_train(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """Train once; ``:checks:`` receive ``{metric: [(step, value), ...]}`` of the stored curves."""
    options = job.options
    steps, snapshots = int(options["steps"]), list(options.get("snapshots") or [])
    train_module = _train_module(module, job)
    make_model = _function(module, str(job.function), job.entry)
    train = _function(train_module, str(options["train"]), options["train_file"])
    model = make_model(**seeded_arguments(make_model, dict(options.get("model_args") or {}), job.seed, job.backend))
    limit = Limits.from_job(job.limits).figures.get(WEIGHTS_MB, DEFAULT_WEIGHTS_MB)
    log = TrainingLog(model, job.backend, steps, snapshots, limit)
    if 0 in snapshots:
        log.keep(0)  # before any update
    returned = None
    try:
        returned = train(model, **seeded_arguments(train, {"steps": steps, "log": log}, job.seed, job.backend))
    except Diverged:
        pass
    # the trained model, if the loop returns one (Equinox must: its models are immutable); anything else
    # it returns (a list of losses) is not a model, and the model it was given is the trained one
    log.finish(returned if type(returned) is type(model) else None)
    curves = log.curves()
    if not curves and log.diverged is not None:
        d = log.diverged
        raise BadResult(f"the run diverged before anything was recorded: {d['metric']} became {d['value']} at step "
                        f"{d['step']}, the first it logged (lower the learning rate, or clip the gradients)")
    if not curves:
        raise BadResult("the training function logged nothing: call log.step(step, loss=...) in its loop")
    data: dict[str, Any] = {"kind": "train", "steps": steps, "curves": curves, "snapshots": log.snapshots}
    if log.diverged is not None:
        data["diverged"] = log.diverged
    produced: dict[str, Any] = {"data": data, "files": log.files}
    if options.get("checks"):
        points = {c["metric"]: [(s, v) for s, v in c["points"]] for c in curves}
        produced["checks"] = run_checks(train_module, options["checks"], points, code=options["train_file"])
    return produced


def _train_module(module: types.ModuleType, job: Job) -> types.ModuleType:
    """The module of ``:train:``: the model's own when it is the same file."""
    if options_file := job.options.get("train_file"):
        if options_file != job.entry:
            path = Path(job.srcdir) / str(options_file)
            return import_file(path, f"tensorviz_train_{path.stem}")
    return module


def _function(module: types.ModuleType, name: str, where: str) -> Any:
    function = getattr(module, name, None)
    if not callable(function):
        raise BadResult(f"no function named {name!r} in {where}")
    return function
