"""Run a ``tv-graph`` job inside the worker: build the model, trace one forward pass,
record activations at checkpoints and run the lesson's numerical checks.
"""

from __future__ import annotations

import inspect
import math
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .inputs import InputSpecError, build_inputs
from .results import BadResult, dtype_name, to_numpy
from .tolerance import OUTPUT_VALUES_LIMIT


def run_graph(module: types.ModuleType, job: dict[str, Any]) -> dict[str, Any]:
    options = job["options"]
    factory = getattr(module, job["function"] or "", None)
    if factory is None:
        raise BadResult(f"no class or function named {job['function']!r} in {job['entry']}")
    try:
        args = build_inputs(options.get("inputs") or [], job["backend"], job["seed"])
    except InputSpecError as exc:
        raise BadResult(f"bad :inputs: spec: {exc}") from None
    kwargs = dict(options.get("model_args") or {})
    if "seed" in inspect.signature(factory).parameters:
        kwargs.setdefault("seed", job["seed"])
    model_file = job["entryPath"]
    if job["backend"] == "torch":
        from .capture.torch_graph import capture_torch_graph

        model = factory(**kwargs)
        if hasattr(model, "eval"):
            model.eval()
        with _checkpoint_errors():
            captured = capture_torch_graph(model, args, model_file, checkpoints=options.get("checkpoints") or [])
        checks = run_checks(module, options.get("checks") or [], model)
        heads = getattr(model, "heads", None) or _find_heads(model)
    else:
        from .capture.jax_graph import capture_jax_graph

        fn = factory(**kwargs)
        with _checkpoint_errors():
            captured = capture_jax_graph(fn, args, model_file, checkpoints=options.get("checkpoints") or [])
        checks = run_checks(module, options.get("checks") or [], fn)
        heads = getattr(fn, "heads", None) or getattr(fn, "num_heads", None)
        heads = heads if isinstance(heads, int) else None
    output = to_numpy(captured["output"])
    if not np.isfinite(output).all():
        raise BadResult(f"the model output (shape {tuple(output.shape)}) has NaN or infinite values")
    data = {
        "kind": "graph",
        "modelFile": job["entry"],
        **captured["graph"],
        "output": output_record(captured["output"], output),
        "activations": {
            name: activation_record(value, options.get("token", -1), heads)
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


def activation_record(value: Any, token: int, heads: int | None) -> dict[str, Any]:
    """One token's feature vector at a checkpoint, with the metrics the page shows."""
    array = to_numpy(value)
    if array.ndim < 2:
        raise BadResult(f"a checkpoint activation needs a token axis; got shape {array.shape}")
    if not np.isfinite(array).all():
        raise BadResult(f"the activation (shape {tuple(array.shape)}) has NaN or infinite values")
    vector = array.reshape(-1, array.shape[-2], array.shape[-1])[0, token]
    metrics = {
        "rms": float(np.sqrt(np.mean(vector**2))),
        "min": float(vector.min()),
        "max": float(vector.max()),
        "width": int(vector.shape[0]),
    }
    if heads:
        metrics["heads"] = int(heads)
    position = token if token >= 0 else array.shape[-2] + token
    return {"shape": list(array.shape), "dtype": dtype_name(value), "token": int(position),
            "values": [float(v) for v in vector], "metrics": metrics}


def run_checks(module: types.ModuleType, names: list[str], model: Any) -> list[dict[str, Any]]:
    """Call each named check with the model; a check that raises counts as failed, with the reason."""
    results = []
    for name in names:
        check = getattr(module, name, None)
        if not callable(check):
            raise BadResult(f"no check function named {name!r} in the model file")
        doc = (inspect.getdoc(check) or name).splitlines()[0]
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
