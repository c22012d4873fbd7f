"""Activation records of any rank: what a checkpoint's tensor *is*, and what the page draws.

A checkpoint tensor has a layout, and a wrong guess draws a wrong picture with
confident labels (row 15 of a conv channel called "token 15"). So the layout is
decided explicitly, from the author's ``:layout:`` or from the tensor and a hint read off the
op that produced it (a conv-like producer means channel data), and when neither settles it
the record says so (``problem``) and the page warns at the directive instead of
guessing: a 3-axis tensor is token features only when its producer makes them (a linear, an
embedding, attention, an MLP, a norm over the last axis). A warning reads better for a learner
than neutral "axis 1 / axis 2" labels, which would still draw one row as if it were a vector:
the author knows what the tensor is and settles it with one option. Layouts:

``tokens``   ``[..., tokens, features]``: one token's feature vector (``values``).
``features`` ``[features]`` or ``[1, features]``: one vector, no token axis.
``channels`` ``[..., channels, H, W]``: small-multiple channel maps plus a channel-mean map.
``channels-last`` ``[..., H, W, channels]`` (Flax's convolutions): drawn as ``channels``.
``channels-length`` ``[..., channels, length]`` (1-D convolutions, pooling, channel norms): one
           row per channel along the positions.
``length-channels`` ``[..., length, channels]`` (Flax's 1-D convolutions): drawn as ``channels-length``.
``heads``    ``[..., heads, T, T]``: one attention map per head.

The hint comes from :mod:`.layout_hints`, which reads the producer off the captured graph.

Pure NumPy: the PyTorch and the JAX paths both call :func:`activation_record`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.layouts import LAYOUTS, normalise_layout
from ...core.words import plural
from ...execute.worker.results import BadResult, dtype_name, is_complex, to_numpy
from .capture.layout_hints import AMBIGUOUS_HEADS

__all__ = ["LAYOUTS", "activation_record", "normalise_layout"]

#: At most this many channel/head maps, each at most this many cells a side.
MAX_MAPS = 16
MAX_SIDE = 24
#: Channels x length: at most this many channel rows, positions mean-pooled to at most this many.
MAX_ROWS = 32
MAX_POSITIONS = 48
#: hints of channel data (see :mod:`.layout_hints`): the rank and the channel axis of a producer
_CHANNEL_HINTS = ("channels", "channels-last", "channels-length", "length-channels")


def activation_record(value: Any, token: int = -1, heads: int | None = None, *, layout: str | None = None,
                      hint: str | None = None) -> dict[str, Any]:
    """The record the page draws for one checkpoint (see the module docstring).

    ``layout`` is the author's (it wins; a conv-like producer's hint gives ``channels`` its rank
    and channel axis); ``hint`` is what the graph says the producer made (:mod:`.layout_hints`).
    A tensor whose layout cannot be inferred gets ``layout: None`` and a ``problem`` for the
    page to warn about.
    """
    array = to_numpy(value)
    if not np.isfinite(array).all():
        raise BadResult(f"the activation (shape {tuple(array.shape)}) has NaN or infinite values")
    chosen = _authored(layout, array.shape, hint) if layout else _infer(array.shape, hint)
    if isinstance(chosen, tuple):  # (None, reason)
        return {"shape": list(array.shape), "dtype": dtype_name(value), "layout": None, "problem": chosen[1]}
    minimum = {"tokens": 2, "features": 1, "channels": 3, "channels-last": 3, "heads": 3,
               "channels-length": 2, "length-channels": 2}[chosen]
    if array.ndim < minimum:
        raise BadResult(f"layout {chosen!r} needs at least {minimum} axes; the activation has shape {array.shape}")
    if chosen == "channels-last":  # the same maps, read with the channel axis last
        array, chosen = np.moveaxis(array, -1, -3), "channels"
    if chosen == "length-channels":
        array, chosen = np.moveaxis(array, -1, -2), "channels-length"
    record = {"tokens": _tokens, "features": _features, "channels": _maps, "heads": _maps,
              "channels-length": _rows}[chosen](array, token)
    record = {"shape": list(array.shape), "dtype": dtype_name(value), "layout": chosen, "axes": list(LAYOUTS[chosen]),
              **record}
    if heads and chosen == "tokens":
        record["metrics"]["heads"] = int(heads)
    if is_complex(value):  # to_numpy kept the real part: the page says so and warns
        record["complexPart"] = "real"
    return record


def _authored(layout: str, shape: tuple[int, ...], hint: str | None) -> str | tuple[None, str]:
    """The author's ``:layout:``; ``channels`` takes its rank and channel axis from a conv-like
    producer, and on a 3-axis tensor with no producer to tell (``[C, H, W]`` or
    ``[batch, C, length]``) a bare ``channels`` asks which."""
    chosen = normalise_layout(layout)
    if chosen == "channels" and hint in _CHANNEL_HINTS:  # channel data: the producer says rank and axis
        return hint
    if chosen == "channels-last" and hint in ("channels-length", "length-channels"):
        return "length-channels"
    bare = " x " not in " ".join(str(layout).lower().replace("×", "x").split())
    if chosen == "channels" and bare and len(shape) == 3:  # no conv-like producer said which
        return (None, f":layout: channels on shape {list(shape)} could be channels x H x W or "
                      "batch x channels x length; write 'channels x H x W' or 'channels x length'")
    return chosen


def _infer(shape: tuple[int, ...], hint: str | None) -> str | tuple[None, str]:
    """The layout the producer's hint (see :mod:`.layout_hints`) or the shape can only mean, or
    (None, why it is ambiguous)."""
    ndim = len(shape)
    if hint == AMBIGUOUS_HEADS:
        return (None, f"a softmax output of shape {list(shape)} could be batch x T x T or heads x T x T "
                      "(its first axis is as long as the batch); say which with :layout: (heads, or tokens)")
    if hint in ("channels", "channels-last") and ndim in (3, 4):
        return hint
    if hint == "heads" and (ndim >= 4 or (ndim == 3 and shape[1] == shape[2])):  # [B, (1,) H, T, T]
        return hint  # (a 3-axis softmax over logits, [batch, tokens, vocabulary], is a token strip)
    if hint in ("channels-length", "length-channels") and ndim in (2, 3):
        return hint
    if hint == "tokens" and ndim in (2, 3):
        return hint
    if hint == "heads" and ndim == 3:  # a softmax over logits normalises the last axis: token features
        return "tokens"
    if hint in _CHANNEL_HINTS:
        return (None, f"a convolution, pooling or norm output of shape {list(shape)} does not read as "
                      "channels x length or channels x H x W; give :layout:")
    if ndim == 1 or (ndim == 2 and shape[0] == 1):
        return "features"
    if ndim == 3:  # [B, T, F] or [B, C, L]: a guess would label one of them wrongly
        return (None, f"nothing that made this 3-axis tensor (shape {list(shape)}) says whether it is tokens x "
                      "features or channels x length; give the graph :layout: tokens or :layout: channels-length "
                      "(or a mapping per checkpoint)")
    if ndim == 2:
        return "tokens"
    if ndim == 4 and hint is None:
        return (None, f"a {ndim}-axis activation of shape {list(shape)} could be channels x H x W or "
                      "heads x T x T; say which with :layout:")
    return (None, f"cannot tell the layout of an activation of shape {list(shape)}; give :layout:")


def _metrics(values: np.ndarray, width: int) -> dict[str, Any]:
    return {"rms": float(np.sqrt(np.mean(values**2))), "min": float(values.min()), "max": float(values.max()),
            "width": int(width)}


def _tokens(array: np.ndarray, token: int) -> dict[str, Any]:
    """One token's feature vector from ``[..., tokens, features]`` (the first batch element)."""
    rows = array.reshape(-1, array.shape[-2], array.shape[-1])[0]
    if not -rows.shape[0] <= token < rows.shape[0]:
        raise BadResult(f":token: {token} is outside the {plural(rows.shape[0], 'token')} of shape {array.shape}")
    vector = rows[token]
    position = token if token >= 0 else rows.shape[0] + token
    return {"token": int(position), "values": [float(v) for v in vector], "metrics": _metrics(vector, vector.shape[0])}


def _features(array: np.ndarray, _token: int) -> dict[str, Any]:
    vector = array.reshape(-1)
    return {"values": [float(v) for v in vector], "metrics": _metrics(vector, vector.shape[0])}


def _maps(array: np.ndarray, _token: int) -> dict[str, Any]:
    """Per-channel (or per-head) maps of the first batch element, pooled to at most MAX_SIDE a side."""
    stack = array.reshape(-1, *array.shape[-3:])[0]  # [maps, H, W]
    count = stack.shape[0]
    pooled = np.stack([_pool(m) for m in stack[:MAX_MAPS]])
    mean = _pool(stack.mean(axis=0))
    record: dict[str, Any] = {
        "count": int(count),
        "mapShape": [int(stack.shape[1]), int(stack.shape[2])],
        "maps": [[[float(v) for v in row] for row in m] for m in pooled],
        "mean": [[float(v) for v in row] for row in mean],
        "values": [float(v) for v in stack.reshape(count, -1).mean(axis=1)],  # one number per map
        "metrics": _metrics(stack, count),
    }
    if pooled.shape[1:] != stack.shape[1:]:
        record["pooledTo"] = [int(pooled.shape[1]), int(pooled.shape[2])]
    return record


def _rows(array: np.ndarray, _token: int) -> dict[str, Any]:
    """Channels x length of the first batch element: one row per channel (the first MAX_ROWS),
    positions mean-pooled by whole factors to at most MAX_POSITIONS."""
    matrix = array.reshape(-1, *array.shape[-2:])[0]  # [channels, length]
    count, length = matrix.shape
    factor = -(-length // MAX_POSITIONS)
    shown = matrix[:MAX_ROWS]
    if factor > 1:
        kept = length // factor * factor
        shown = shown[:, :kept].reshape(shown.shape[0], kept // factor, factor).mean(axis=2)
    record: dict[str, Any] = {
        "count": int(count),
        "length": int(length),
        "step": int(factor),  # positions per drawn column
        "matrix": [[float(v) for v in row] for row in shown],
        "values": [float(v) for v in matrix.mean(axis=1)],  # one number per channel
        "metrics": _metrics(matrix, count),
    }
    if factor > 1:
        record["pooledTo"] = [int(shown.shape[0]), int(shown.shape[1])]
    return record


def _pool(matrix: np.ndarray) -> np.ndarray:
    """Mean-pool a 2-D map by whole factors until both sides are at most MAX_SIDE."""
    fy = -(-matrix.shape[0] // MAX_SIDE)
    fx = -(-matrix.shape[1] // MAX_SIDE)
    if fy == 1 and fx == 1:
        return matrix
    h, w = matrix.shape[0] // fy * fy, matrix.shape[1] // fx * fx
    return matrix[:h, :w].reshape(h // fy, fy, w // fx, fx).mean(axis=(1, 3))
