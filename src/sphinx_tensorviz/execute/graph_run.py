"""Run a ``tv-graph`` job inside the worker: build the model, trace one forward pass,
record activations at checkpoints and run the lesson's numerical checks.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .activations import activation_record, channel_hints
from .graph_filter import fold_groups
from .inputs import InputSpecError, build_call
from .results import BadResult, dtype_name, to_numpy
from .tolerance import OUTPUT_VALUES_LIMIT

__all__ = ["activation_record", "run_checks", "run_graph"]


def run_graph(module: types.ModuleType, job: dict[str, Any]) -> dict[str, Any]:
    options = job["options"]
    factory = getattr(module, job["function"] or "", None)
    if factory is None:
        raise BadResult(f"no class or function named {job['function']!r} in {job['entry']}")
    try:
        args, call_kwargs = build_call(options.get("inputs") or [], job["backend"], job["seed"])
    except InputSpecError as exc:
        raise BadResult(f"bad :inputs: spec: {exc}") from None
    kwargs = dict(options.get("model_args") or {})
    if "seed" in inspect.signature(factory).parameters:
        kwargs.setdefault("seed", job["seed"])
    model_file = job["entryPath"]
    hints: dict[str, str | None] = {}
    if job["backend"] == "torch":
        model, captured = _trace_torch(factory, kwargs, args, {**call_kwargs, **(options.get("call_args") or {})},
                                       job, options)
        hints = captured["hints"]
        checks = run_checks(module, options.get("checks") or [], model, _check_modules(job))
        heads = getattr(model, "heads", None) or _find_heads(model)
    else:
        if call_kwargs:
            raise BadResult("named :inputs: are only for PyTorch models; give JAX inputs in order")
        from .capture.jax_graph import capture_jax_graph

        fn = factory(**kwargs)
        with _checkpoint_errors():
            captured = capture_jax_graph(fn, args, model_file, checkpoints=options.get("checkpoints") or [])
        hints = dict(channel_hints(captured["graph"], captured["activations"]))
        checks = run_checks(module, options.get("checks") or [], fn, _check_modules(job))
        heads = getattr(fn, "heads", None) or getattr(fn, "num_heads", None)
        heads = heads if isinstance(heads, int) else None
    output = to_numpy(captured["output"])
    if not np.isfinite(output).all():
        raise BadResult(f"the model output (shape {tuple(output.shape)}) has NaN or infinite values")
    layouts = options.get("layout")
    data = {
        "kind": "graph",
        "modelFile": job["entry"],
        **captured["graph"],
        "output": output_record(captured["output"], output),
        "activations": {
            name: activation_record(value, options.get("token", -1), heads,
                                    layout=layouts.get(name) if isinstance(layouts, dict) else layouts,
                                    hint=hints.get(name))
            for name, value in captured["activations"].items()
        },
    }
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
                 job: dict[str, Any], options: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Build the model, trace one call, then fold or drop the function groups the author named."""
    from .capture.torch_graph import capture_torch_graph

    model = factory(**kwargs)
    if hasattr(model, "eval"):
        model.eval()
    with _checkpoint_errors():
        captured = capture_torch_graph(model, args, job["entryPath"], kwargs=call_kwargs,
                                       checkpoints=options.get("checkpoints") or [], srcdir=job.get("srcdir"))
    if captured["output"] is None:
        raise BadResult(f"the model returned no tensor (got {type(captured['raw']).__name__})")
    try:
        captured["graph"] = fold_groups(captured["graph"], collapse=options.get("collapse") or [],
                                        hide=options.get("hide") or [])
    except ValueError as exc:
        raise BadResult(str(exc)) from None
    return model, captured


def run_checks(module: types.ModuleType, names: list[str], model: Any,
               modules: dict[str, types.ModuleType] | None = None) -> list[dict[str, Any]]:
    """Call each named check with the model; a check that raises counts as failed, with the reason.

    A name is a function of the lesson's module (or of ``modules[""]``, the ``:checks-source:``
    file), or ``where:function`` with ``where`` a key of ``modules`` (a project file or an
    importable module), so checks can live outside a model file that must stay untouched.
    """
    results = []
    modules = modules or {}
    for name in names:
        where, _, function = name.rpartition(":")
        home = modules.get(where) if where else modules.get("", module)
        check = getattr(home, function, None) if home is not None else None
        if not callable(check):
            place = where or ("the :checks-source: file" if "" in modules else "the model file")
            raise BadResult(f"no check function named {function!r} in {place}")
        doc = (inspect.getdoc(check) or function).splitlines()[0]
        try:
            outcome = check(model)
        except Exception as exc:  # noqa: BLE001 - a broken claim is reported as failed
            results.append({"name": name, "description": doc, "passed": False, "value": None,
                            "detail": f"{type(exc).__name__}: {exc}"})
            continue
        if not isinstance(outcome, dict):  # a bool, numpy.bool_ or 0-d tensor
            outcome = {"passed": outcome}
        value = _number(outcome.get("value"))
        record = {
            "name": name,
            "description": str(outcome.get("description") or doc),
            "passed": bool(outcome.get("passed")),
            "value": value,
        }
        tolerance = _number(outcome.get("tolerance"))
        if tolerance is not None and value is not None:
            record["detail"] = f"measured {value:.3g}, tolerance {tolerance:.3g}"
        results.append(record)
    return results


def _number(value: Any) -> float | None:
    """A finite float from a Python, NumPy or 0-d tensor number; ``None`` otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _find_heads(model: Any) -> int | None:
    for sub in getattr(model, "modules", lambda: [])():
        heads = getattr(sub, "heads", None)
        if isinstance(heads, int):
            return heads
    return None


def _check_modules(job: dict[str, Any]) -> dict[str, types.ModuleType]:
    """The modules that ``:checks:`` and ``:checks-source:`` name, loaded once each.

    Keys: ``""`` for the ``:checks-source:`` file, the ``path.py`` or dotted module name
    otherwise. Paths are relative to the course folder and were checked to be inside it
    when the page was read.
    """
    options = job.get("options", {})
    wanted = {name.rpartition(":")[0] for name in options.get("checks") or [] if ":" in name}
    loaded: dict[str, types.ModuleType] = {}
    if options.get("checks_source"):
        loaded[""] = _load(options["checks_source"], job)
    for where in sorted(wanted):
        loaded[where] = _load(where, job)
    return loaded


def _load(where: str, job: dict[str, Any]) -> types.ModuleType:
    if where.endswith(".py"):
        path = Path(job.get("srcdir") or ".") / where
        spec = importlib.util.spec_from_file_location(f"tensorviz_checks_{path.stem}", path)
        if spec is None or spec.loader is None or not path.is_file():
            raise BadResult(f"cannot load checks from {where}")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return loaded
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise BadResult(f"cannot import checks module {where!r}: {exc}") from None
