"""A model's parameters as a safetensors file, for PyTorch and for JAX (Flax NNX, Equinox, pytrees).

Runs in the worker. The file's bytes are named by their sha256 (:mod:`.run` returns them to the
build), and its tensor names are those the framework loads back (see the package docstring).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ...execute.worker.loader import BadResult
from ...execute.worker.trained import path_name


def parameters_file(model: Any, backend: str) -> tuple[bytes, int]:
    """(the safetensors bytes of ``model``'s parameters, the number of tensors)."""
    if backend == "torch":
        from safetensors.torch import save

        state = getattr(model, "state_dict", None)
        if not callable(state):
            raise BadResult(f"a torch model has a state_dict(); make_model returned {type(model).__name__}")
        # clones: tied weights share storage, which safetensors refuses to write twice
        tensors = {name: value.detach().cpu().contiguous().clone() for name, value in state().items()}
        return save(tensors), len(tensors)
    from safetensors.numpy import save as save_numpy

    arrays = flat_jax_arrays(model)
    if not arrays:
        raise BadResult(f"the model ({type(model).__name__}) holds no arrays to keep as a snapshot")
    return save_numpy(arrays), len(arrays)


def flat_jax_arrays(model: Any) -> dict[str, np.ndarray]:
    """The model's parameters by dotted pytree path: ``nnx.state(model, nnx.Param)`` of a Flax NNX
    module, else every array leaf of the pytree (an Equinox module, a dict of arrays)."""
    import jax

    tree = model
    try:
        from flax import nnx

        if isinstance(model, nnx.Module):
            tree = nnx.state(model, nnx.Param)
    except ImportError:
        pass
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    arrays: dict[str, np.ndarray] = {}
    for path, leaf in leaves:
        if not isinstance(leaf, (jax.Array, np.ndarray)):
            continue
        value = np.asarray(leaf)
        if value.dtype.kind not in "fiub":  # bfloat16 and the like: float32, which numpy can write
            value = value.astype(np.float32)
        arrays[path_name(path)] = np.ascontiguousarray(value)
    return arrays


def sha256_name(content: bytes) -> str:
    return f"{hashlib.sha256(content).hexdigest()}.safetensors"
