"""The weights every framework of a figure with ``:frameworks:`` loads, in the worker.

Two halves. :func:`run_shared_weights` is the entry of the shared-weights job: it builds the PyTorch
model once from the seed (the same model the PyTorch figure builds) and keeps its ``state_dict()`` as a
safetensors file, or copies the author's ``:weights:`` file, and returns it to the store, where each
framework's job finds it as a figure that uses a training finds its snapshot (:mod:`..trained`).
:func:`load_shared` is the other half, called by :func:`.trained.model_factory` in each framework's job:
PyTorch loads the file as it is; a JAX model gets it through :mod:`.weight_names`' mapping.
"""

from __future__ import annotations

import hashlib
import types
from pathlib import Path
from typing import Any

from ...core.kinds import worker_entry
from ...core.protocol import Job
from ...store.files import read_regular
from .loader import BadResult, import_file, seeded_arguments

#: the largest ``:weights:`` file a job reads (the store keeps what it returns)
MAX_WEIGHTS_BYTES = 1 << 30


@worker_entry
def run_shared_weights(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """The shared weights as a returned file, described by ``data`` (its record and each tensor's shape)."""
    given = job.options.get("file")
    content = _given_file(job, given) if given else _seeded_torch_weights(module, job)
    from safetensors.numpy import load

    try:
        tensors = {name: list(values.shape) for name, values in load(content).items()}
    except Exception as exc:  # noqa: BLE001 - safetensors raises its own error types
        raise BadResult(f":weights: {given} is not a safetensors file ({exc})") from None
    sha256 = hashlib.sha256(content).hexdigest()
    return {"data": {"kind": "shared-weights", "file": {"sha256": sha256, "size": len(content), "format": "safetensors"},
                     "tensors": tensors},
            "files": {f"{sha256}.safetensors": content}}


def _given_file(job: Job, given: str) -> bytes:
    try:
        return read_regular(Path(job.srcdir) / given, MAX_WEIGHTS_BYTES)
    except OSError as exc:
        raise BadResult(f"cannot read :weights: {given}: {exc}") from None


def _seeded_torch_weights(module: types.ModuleType, job: Job) -> bytes:
    """The PyTorch model's parameters as the factory makes them from the seed (the framework is seeded)."""
    from safetensors.torch import save

    factory = getattr(module, job.function or "", None)
    if not callable(factory):
        raise BadResult(f"no class or function named {job.function!r} in {job.entry}")
    model = factory(**seeded_arguments(factory, job.options.get("model_args") or {}, job.seed, job.backend, key=False))
    state = getattr(model, "state_dict", None)
    if not callable(state):
        raise BadResult(f"the PyTorch model has a state_dict(); {job.function} gave {type(model).__name__}")
    # clones: tied weights share storage, which safetensors refuses to write twice
    return save({name: value.detach().cpu().contiguous().clone() for name, value in state().items()})


def load_shared(model: Any, content: bytes, job: Job, shared: dict[str, Any]) -> Any:
    """``model`` with the shared weights loaded: as they are for PyTorch, mapped for a JAX model."""
    from .trained import jax_parameters, load_weights

    if job.backend == "torch":
        return load_weights(model, content, "torch")
    from safetensors.numpy import load, save

    torch_arrays = load(content)
    jax_shapes = {name: tuple(leaf.shape) for name, leaf in jax_parameters(model)}
    from .weight_names import mapped_arrays

    author = _author_map(shared.get("map"), job, torch_arrays, jax_shapes)
    return load_weights(model, save(mapped_arrays(torch_arrays, jax_shapes, author)), "jax")


def _author_map(given: dict[str, Any] | None, job: Job, torch_arrays: dict[str, Any],
                jax_shapes: dict[str, tuple[int, ...]]) -> dict[str, str]:
    """``:weight-map:`` as ``{torch name: jax name}``: its ``pairs``, or what its ``function``
    (``file.py:name``) returns when called with both sides' ``{name: shape}``."""
    if not given:
        return {}
    if "pairs" in given:
        return {str(k): str(v) for k, v in given["pairs"].items()}
    where, _, name = str(given["function"]).rpartition(":")
    function = getattr(import_file(Path(job.srcdir) / where, Path(where).stem), name, None)
    if not callable(function):
        raise BadResult(f":weight-map: {where} has no function {name!r}")
    found = function({n: tuple(a.shape) for n, a in torch_arrays.items()}, dict(jax_shapes))
    if not isinstance(found, dict):
        raise BadResult(f":weight-map: {given['function']} returned {type(found).__name__}, not "
                        "{torch name: jax name}")
    return {str(k): str(v) for k, v in found.items()}
