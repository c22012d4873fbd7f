"""Every attention layer's weights from one JAX forward pass (Flax NNX, Equinox or plain JAX).

Attention in JAX code goes through ``jax.nn.softmax`` (Flax's ``nnx.dot_product_attention_weights``
does) or through the fused ``jax.nn.dot_product_attention`` (Flax's ``nnx.dot_product_attention``
without dropout does). For the one call of the model, both are wrapped: each softmax over the last
axis of a ``[..., T, T]`` array (queries x keys) is kept, and each fused call's weights are computed
as its documentation defines them (the call itself still runs). Nothing knows a model class.

Under ``jax.vmap`` (Equinox maps its attention over the heads) the softmax sees batch tracers that
carry the concrete values of all heads: they are kept with the mapped axes first, so a ``vmap`` over
heads gives ``[heads, T, T]``. A model compiled with ``jax.jit`` hands the softmax abstract tracers,
which have no values: the capture says so (call the model without ``jit`` for the figure).

Standard library and JAX only: ``run.py`` carries a copy of these definitions (:mod:`.reproduce`).
"""

from __future__ import annotations

from typing import Any


class TracedAttention(ValueError):
    """The softmax saw only tracers: the model was compiled, so its weights have no values here."""


def jax_attention(model: Any, args: tuple[Any, ...]) -> list[Any]:
    """The attention weights of each softmax over keys, in call order, as arrays ``[..., T, T]``."""
    import jax

    original = jax.nn.softmax
    found: list[Any] = []
    traced: list[bool] = []

    def softmax(x: Any, axis: Any = -1, *rest: Any, **kwargs: Any) -> Any:
        result = original(x, axis, *rest, **kwargs)
        shape = getattr(result, "shape", ())
        if len(shape) >= 2 and shape[-1] == shape[-2] and axis in (-1, len(shape) - 1):
            values = unmapped(result)
            if values is None:
                traced.append(True)
            else:
                found.append(values[0])
        return result

    fused = jax.nn.dot_product_attention

    def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                              **kwargs: Any) -> Any:
        if any(isinstance(value, jax.core.Tracer) for value in (query, key, bias, mask)):
            traced.append(True)
        else:
            found.append(fused_weights(query, key, bias, mask, kwargs.get("scale"), kwargs.get("is_causal", False)))
        return fused(query, key, value, bias, mask, **kwargs)

    jax.nn.softmax, jax.nn.dot_product_attention = softmax, dot_product_attention
    try:
        model(*args)
    finally:
        jax.nn.softmax, jax.nn.dot_product_attention = original, fused
    if not found and traced:
        raise TracedAttention("the model's attention ran under jax.jit (tracers, no values): call the model "
                              "without jit for the figure")
    return found


def unmapped(value: Any) -> tuple[Any, int] | None:
    """The concrete values of ``value`` with the axes of the ``jax.vmap`` calls around it first
    (outermost first), and how many there are; ``None`` for a tracer without values (``jax.jit``)."""
    import jax
    import numpy as np

    if not isinstance(value, jax.core.Tracer):
        return np.asarray(value, dtype=np.float32), 0
    inner, axis = getattr(value, "val", None), getattr(value, "batch_dim", None)
    if inner is None or not isinstance(axis, int):
        return None
    found = unmapped(inner)
    if found is None:
        return None
    array, leading = found
    return np.moveaxis(array, leading + axis, leading), leading + 1


def fused_weights(query: Any, key: Any, bias: Any, mask: Any, scale: float | None, is_causal: bool) -> Any:
    """The weights ``jax.nn.dot_product_attention`` applies, ``[batch, heads, T, S]`` (its inputs are
    ``[batch, T, heads, head size]``; grouped key heads are repeated for their query heads)."""
    import numpy as np

    query, key = np.asarray(query, dtype=np.float32), np.asarray(key, dtype=np.float32)
    if query.ndim == 3:
        query, key = query[None], key[None]
    if key.shape[-2] != query.shape[-2]:
        key = np.repeat(key, query.shape[-2] // key.shape[-2], axis=-2)
    logits = np.einsum("btnh,bsnh->bnts", query, key) * (scale if scale is not None else query.shape[-1] ** -0.5)
    if bias is not None:
        logits = logits + np.asarray(bias, dtype=np.float32)
    allowed = np.ones(logits.shape, dtype=bool)
    if mask is not None:
        allowed = allowed & np.asarray(mask, dtype=bool)
    if is_causal:
        allowed = allowed & np.tril(np.ones(logits.shape[-2:], dtype=bool))
    logits = np.where(allowed, logits, -np.inf)
    logits = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(logits)
    return weights / weights.sum(axis=-1, keepdims=True)
