"""PyTorch's parameter names and layouts, as a JAX model's (Flax NNX, Equinox, any pytree) wants them.

Runs in the worker, with NumPy only: the shared weights of a figure with ``:frameworks:`` are kept with
PyTorch's ``state_dict()`` names, and a JAX model's job loads them through this mapping. The default
(documented in ``docs/howto/frameworks.md``) pairs each JAX parameter with the PyTorch one of the same
dotted path (``layers.0.fc.kernel`` <- ``layers.0.fc.weight``: Flax NNX paths and Equinox attribute
paths are dotted like PyTorch's module paths; the ``.value`` that ends an NNX state path is not part of
the name), after renaming its last part:

* ``kernel`` <- ``weight``, transposed: a ``Linear.weight`` is out x in, a Flax kernel in x out; a
  convolution's OIHW (out, in, then the window) becomes HWIO (the window, then in, out);
* ``scale`` <- ``weight`` (LayerNorm, RMSNorm); ``embedding`` <- ``weight`` (Embed);
* anything else (``bias``, Equinox's ``weight``, which is laid out as PyTorch's) as it is.

The author's map (``:weight-map:``) names pairs the default cannot infer (``{torch name: jax name}``);
its pairs get the same layout rule by the JAX name's last part. What stays unpaired on either side is
an error that lists both sides' leftovers with their shapes, so the author sees what to map.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .loader import BadResult

#: a JAX parameter's last name part -> the PyTorch one it takes its values from
RENAMED = {"kernel": "weight", "scale": "weight", "embedding": "weight"}


def parameter_path(jax_name: str) -> str:
    """``fc.kernel`` of ``fc.kernel.value``: Flax NNX's state paths end in the variable's ``value``."""
    return jax_name.removesuffix(".value")


def torch_name(jax_name: str) -> str:
    """The PyTorch parameter the default map gives ``jax_name`` (``fc.kernel`` -> ``fc.weight``)."""
    head, _, last = parameter_path(jax_name).rpartition(".")
    renamed = RENAMED.get(last, last)
    return f"{head}.{renamed}" if head else renamed


def jax_layout(values: np.ndarray, jax_name: str) -> np.ndarray:
    """PyTorch's layout of ``values`` made the JAX parameter's: a ``kernel`` is transposed (a matrix) or
    has its out and in axes moved behind the window (a convolution, OIHW -> HWIO); the rest is as is."""
    if parameter_path(jax_name).rpartition(".")[2] != "kernel" or values.ndim < 2:
        return values
    if values.ndim == 2:
        return values.T
    return values.transpose(*range(2, values.ndim), 1, 0)


def shape_text(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def mapped_arrays(torch_arrays: Mapping[str, np.ndarray], jax_shapes: Mapping[str, tuple[int, ...]],
                  author: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """``{jax name: values}`` for every parameter of the JAX model, from the PyTorch-named arrays.

    ``BadResult`` when a parameter is left without a partner on either side (both sides' leftovers, with
    shapes), or when a pair's shapes differ after the layout rule."""
    author = dict(author or {})
    unknown = sorted(name for name in author if name not in torch_arrays)
    if unknown:
        raise BadResult(f":weight-map: names {', '.join(unknown)}, which the shared weights do not hold "
                        f"(they hold {', '.join(sorted(torch_arrays)) or 'nothing'})")
    # a Flax NNX name may be given without the ``.value`` its state path ends with
    author = {torch: (f"{jax}.value" if jax not in jax_shapes and f"{jax}.value" in jax_shapes else jax)
              for torch, jax in author.items()}
    wanted = {jax: torch for torch, jax in author.items()}
    pairs: dict[str, str] = {}
    for jax in jax_shapes:
        source = wanted.get(jax, torch_name(jax))
        if source in torch_arrays and source not in pairs.values() and (jax in wanted or source not in author):
            pairs[jax] = source
    left_jax = sorted(name for name in jax_shapes if name not in pairs)
    left_torch = sorted(name for name in torch_arrays if name not in pairs.values())
    if left_jax or left_torch:
        raise BadResult(
            "the shared weights do not pair up with the JAX model's parameters: left in the JAX model: "
            + (", ".join(f"{n} {shape_text(tuple(jax_shapes[n]))}" for n in left_jax) or "none")
            + "; left in the PyTorch weights: "
            + (", ".join(f"{n} {shape_text(torch_arrays[n].shape)}" for n in left_torch) or "none")
            + ". Name the pairs with :weight-map: {torch name: jax name}")
    result = {}
    for jax, source in pairs.items():
        values = jax_layout(np.asarray(torch_arrays[source]), jax)
        if tuple(values.shape) != tuple(jax_shapes[jax]):
            raise BadResult(f"the shared weight {source} {shape_text(torch_arrays[source].shape)} does not fit the "
                            f"JAX parameter {jax} {shape_text(tuple(jax_shapes[jax]))}"
                            + (" (as a kernel it is transposed)" if values is not torch_arrays[source] else ""))
        result[jax] = np.ascontiguousarray(values)
    return result
