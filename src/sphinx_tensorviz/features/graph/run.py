"""The worker's entry for ``tv-graph``: build the model, trace one forward pass, record
activations at checkpoints and run the lesson's numerical checks.

Named by the kind's declaration (``run``), which the build copies into each job; runs in the worker only.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...core.kinds import worker_entry
from ...core.limits import LimitExceeded, Limits
from ...core.protocol import Job
from ...execute.tolerance import OUTPUT_VALUES_LIMIT
from ...execute.worker.checks import check_modules, code_name, run_checks
from ...execute.worker.inputs import InputSpecError, build_call
from ...execute.worker.loader import seeded_arguments
from ...execute.worker.results import BadResult, dtype_name, to_numpy
from ...execute.worker.trained import model_factory
from . import DEFAULT_NODES, NODES
from .activation_records import activation_record
from .capture.layout_hints import layout_hints
from .checks import nodes_problem
from .filter import fold_groups


@worker_entry
def run_graph(module: types.ModuleType, job: Job) -> dict[str, Any]:
    options = job.options
    factory = model_factory(module, job)  # loads a training's weights for ``:model: @name``
    try:
        args, call_kwargs = build_call(options.get("inputs") or [], job.backend, job.seed)
    except InputSpecError as exc:
        raise BadResult(f"bad :inputs: spec: {exc}") from None
    # a model factory gets the seed (never a JAX key: its parameters are the model's own business)
    kwargs = seeded_arguments(factory, options.get("model_args") or {}, job.seed, job.backend, key=False)
    model_file = job.entry_path
    if job.backend == "torch":
        model, captured = _trace_torch(factory, kwargs, args, {**call_kwargs, **(options.get("call_args") or {})},
                                       job, options)
        checks = run_checks(module, options.get("checks") or [], model, check_modules(job), code_name(job))
        heads = getattr(model, "heads", None) or _find_heads(model)
    else:
        if call_kwargs:
            raise BadResult("named :inputs: are only for PyTorch models; give JAX inputs in order")
        from .capture.jax_graph import capture_jax_graph

        fn = factory(**kwargs)
        with _checkpoint_errors():
            captured = capture_jax_graph(fn, args, model_file, checkpoints=options.get("checkpoints") or [])
        if captured["output"] is None:
            raise BadResult(f"the function returned no array (got {type(captured['raw']).__name__})")
        checks = run_checks(module, options.get("checks") or [], fn, check_modules(job), code_name(job))
        heads = getattr(fn, "heads", None) or getattr(fn, "num_heads", None)
    heads = heads if isinstance(heads, int) else None
    # what each checkpoint is, read off its producer in the graph (the same reading for both frameworks)
    hints = layout_hints(captured["graph"], captured["activations"], heads=heads, channels_first=job.backend == "torch")
    output = to_numpy(captured["output"])
    if not np.isfinite(output).all():
        raise BadResult(f"the model output (shape {tuple(output.shape)}) has NaN or infinite values")
    layouts = options.get("layout")
    data = {
        "kind": "graph",
        "modelFile": job.entry,
        **captured["graph"],
        "output": output_record(captured["output"], output),
        "activations": {
            name: activation_record(value, options.get("token", -1), heads,
                                    layout=layouts.get(name) if isinstance(layouts, dict) else layouts,
                                    hint=hints.get(name))
            for name, value in captured["activations"].items()
        },
    }
    problem = nodes_problem(data, Limits.from_job(job.limits).figures.get(NODES, DEFAULT_NODES))
    if problem:
        raise LimitExceeded(problem, NODES)
    return {"data": data, "checks": checks}


def output_record(value: Any, array: np.ndarray) -> dict[str, Any]:
    """The output's shape and dtype, and its first values: enough for ``verify`` to notice a change
    without storing a large tensor in a committed file."""
    return {"shape": list(array.shape), "dtype": dtype_name(value),
            "values": [float(v) for v in array.reshape(-1)[:OUTPUT_VALUES_LIMIT]]}


@contextmanager
def _checkpoint_errors() -> Iterator[None]:
    """A checkpoint the capture cannot record is the lesson's mistake: a bad result, not a crash."""
    try:
        yield
    except ValueError as exc:
        if "checkpoint" in str(exc):
            raise BadResult(str(exc)) from None
        raise


def _trace_torch(factory: Any, kwargs: dict[str, Any], args: tuple, call_kwargs: dict[str, Any],
                 job: Job, options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Build the model, trace one call, then fold or drop the function groups the author named."""
    from .capture.torch_graph import capture_torch_graph

    model = factory(**kwargs)
    if hasattr(model, "eval"):
        model.eval()
    with _checkpoint_errors():
        captured = capture_torch_graph(model, args, job.entry_path, kwargs=call_kwargs,
                                       checkpoints=options.get("checkpoints") or [], srcdir=job.srcdir)
    if captured["output"] is None:
        raise BadResult(f"the model returned no tensor (got {type(captured['raw']).__name__})")
    try:
        captured["graph"] = fold_groups(captured["graph"], collapse=options.get("collapse") or [],
                                        hide=options.get("hide") or [])
    except ValueError as exc:
        raise BadResult(str(exc)) from None
    return model, captured


def _find_heads(model: Any) -> int | None:
    for sub in getattr(model, "modules", lambda: [])():
        heads = getattr(sub, "heads", None)
        if isinstance(heads, int):
            return heads
    return None
