"""Build model inputs from the author's specs: ``{shape: [1, 6], dtype: int64, fill: ones}``.

A spec with a ``name`` (``{name: input_ids, shape: [1, 6], dtype: int64}``) is passed
as that keyword argument; specs without one are positional, in order.

Shared by the worker and the generated ``run.py`` of every kind that builds a model's inputs (a
graph, an attention grid), so both feed the model the same tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

FILLS = ("ones", "zeros", "arange", "randn", "randint", "values")


class InputSpecError(ValueError):
    """An input spec that cannot be turned into an array."""


def numpy_input(spec: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    if not isinstance(spec, dict) or "shape" not in spec:
        raise InputSpecError(f"an input needs at least a shape, e.g. {{shape: [1, 6]}}; got {spec!r}")
    shape = tuple(int(n) for n in spec["shape"])
    dtype = np.dtype(spec.get("dtype", "float32"))
    fill = spec.get("fill", "ones")
    if fill == "ones":
        return np.ones(shape, dtype)
    if fill == "zeros":
        return np.zeros(shape, dtype)
    if fill == "arange":
        return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    if fill == "randn":
        return rng.standard_normal(shape).astype(dtype)
    if fill == "randint":
        return rng.integers(0, int(spec.get("high", 2)), size=shape).astype(dtype)
    if fill == "values":
        array = np.asarray(spec["values"], dtype=dtype)
        if array.shape != shape:
            raise InputSpecError(f"values have shape {array.shape}, spec says {shape}")
        return array
    raise InputSpecError(f"unknown fill {fill!r}; use one of {', '.join(FILLS)}")


def build_call(specs: list[dict[str, Any]], backend: str, seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(positional, keyword) inputs as torch tensors or JAX arrays, drawn in spec order."""
    rng = np.random.default_rng(seed)
    try:
        arrays = [(_input_name(spec), numpy_input(spec, rng)) for spec in specs]
    except TypeError as exc:
        raise InputSpecError(str(exc)) from None
    if backend == "torch":
        import torch

        convert: Any = torch.from_numpy
    else:
        import jax.numpy as jnp

        convert = jnp.asarray
    args = tuple(convert(a) for name, a in arrays if name is None)
    kwargs = {name: convert(a) for name, a in arrays if name is not None}
    return args, kwargs


def _input_name(spec: Any) -> str | None:
    """The keyword a spec is passed as, or None for a positional input."""
    name = spec.get("name") if isinstance(spec, dict) else None
    if name is None:
        return None
    if not isinstance(name, str) or not name.isidentifier():
        raise InputSpecError(f"an input name must be a Python identifier like input_ids; got {name!r}")
    return name
