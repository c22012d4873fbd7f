"""A model factory that loads a training run's weights (``:model: @name:step``), in the worker.

A kind's worker entry takes its factory from :func:`model_factory` instead of the lesson module: for a
job that uses a trained model (the build put the snapshot's file in ``options["trained"]["weights"]``,
:mod:`..trained`), the factory builds the model as the training did and then loads the weights, before
the figure's own code sees it. The file is read as a regular file of its recorded size and sha256 (a
store is a folder anyone can write). The tensor names are what :mod:`...features.train.weights`
wrote: PyTorch ``state_dict()`` keys, for Flax NNX the dotted paths of ``nnx.state(model,
nnx.Param)``, for Equinox (any pytree) those of its array leaves (:func:`path_name`).
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.protocol import Job
from ...core.request import TRAINED
from ...store.files import read_regular
from .loader import BadResult


def model_factory(module: types.ModuleType, job: Job) -> Callable[..., Any]:
    """The job's model factory (``:model:``), loading the trained weights when the job names some."""
    factory = getattr(module, job.function or "", None)
    if not callable(factory):
        raise BadResult(f"no class or function named {job.function!r} in {job.entry}")
    used = job.options.get(TRAINED) or {}
    weights = used.get("weights")
    if not weights:
        return factory

    def trained(*args: Any, **kwargs: Any) -> Any:
        if used.get("shared"):  # ``:frameworks:``: the weights every framework's model loads
            from .shared_weights import load_shared

            return load_shared(factory(*args, **kwargs), checked_bytes(weights), job, used["shared"])
        return load_weights(factory(*args, **kwargs), checked_bytes(weights), job.backend)

    return trained


def checked_bytes(weights: dict[str, Any]) -> bytes:
    """The file's bytes, refused when they are not the ones the training recorded."""
    path = Path(str(weights["path"]))
    try:
        content = read_regular(path, int(weights["size"]))
    except OSError as exc:
        raise BadResult(f"cannot read the trained weights {path.name}: {exc}") from None
    if hashlib.sha256(content).hexdigest() != weights["sha256"]:
        raise BadResult(f"the trained weights {path.name} in the store are not the file the training recorded")
    return content


def load_weights(model: Any, content: bytes, backend: str) -> Any:
    """``model`` with safetensors ``content`` loaded: ``load_state_dict`` (PyTorch, strict: a model of
    another shape fails), ``nnx.update`` (Flax NNX, in place), or a copy of the pytree with each array
    leaf replaced (Equinox and other immutable pytrees: the loaded model is the one returned)."""
    if backend == "torch":
        from safetensors.torch import load

        if not callable(getattr(model, "load_state_dict", None)):
            raise BadResult(f"a trained torch model has load_state_dict(); the factory gave {type(model).__name__}")
        model.load_state_dict(load(content))
        return model
    import jax
    from safetensors.numpy import load as load_numpy

    arrays = load_numpy(content)
    tree, nnx = _parameter_tree(model)
    leaves = jax_parameters(model)
    missing = [name for name, _ in leaves if name not in arrays]
    if not leaves or missing:
        raise BadResult(f"the trained weights lack {', '.join(missing[:5]) or 'every array of the model'}: the "
                        "model is not the one trained")

    def loaded(path: tuple[Any, ...], leaf: Any) -> Any:
        return jax.numpy.asarray(arrays[path_name(path)], dtype=leaf.dtype) if isinstance(leaf, jax.Array) else leaf

    new = jax.tree_util.tree_map_with_path(loaded, tree)
    if tree is model:
        return new
    nnx.update(model, new)
    return model


def _parameter_tree(model: Any) -> tuple[Any, Any]:
    """(the pytree of ``model``'s parameters: ``nnx.state(model, nnx.Param)`` of a Flax NNX module, else the
    model itself; the ``nnx`` module, or ``None`` when Flax is not installed)."""
    try:
        from flax import nnx
    except ImportError:
        return model, None
    return (nnx.state(model, nnx.Param) if isinstance(model, nnx.Module) else model), nnx


def jax_parameters(model: Any) -> list[tuple[str, Any]]:
    """``(dotted path, array)`` of each parameter of a JAX model (Flax NNX, Equinox, any pytree)."""
    import jax

    tree, _ = _parameter_tree(model)
    return [(path_name(p), leaf) for p, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]
            if isinstance(leaf, jax.Array)]


def path_name(path: tuple[Any, ...]) -> str:
    """``('layers', 0, 'kernel')`` of any key kinds, as ``layers.0.kernel`` (the name a snapshot keeps)."""
    parts = []
    for key in path:
        for attribute in ("key", "name", "idx"):
            if hasattr(key, attribute):
                parts.append(str(getattr(key, attribute)))
                break
        else:
            parts.append(str(key))
    return ".".join(parts)
