"""Activation records of any rank: what a checkpoint's tensor *is*, and what the page draws.

A checkpoint tensor has a layout, and a wrong guess draws a wrong picture with
confident labels (row 15 of a conv channel called "token 15"). So the layout is
decided explicitly, from the author's ``:layout:`` or from the tensor and a hint the
capture gives (a conv-like producer means feature maps), and when neither settles it
the record says so (``problem``) and the page warns at the directive instead of
guessing. Layouts:

``tokens``   ``[..., tokens, features]``: one token's feature vector (``values``).
``features`` ``[features]`` or ``[1, features]``: one vector, no token axis.
``channels`` ``[..., channels, H, W]``: small-multiple channel maps plus a channel-mean map.
``channels-last`` ``[..., H, W, channels]`` (Flax's convolutions): drawn as ``channels``.
``heads``    ``[..., heads, T, T]``: one attention map per head.

Pure NumPy: the PyTorch and the JAX paths both call :func:`activation_record`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.layouts import LAYOUTS, normalise_layout
from ..core.words import plural
from .results import BadResult, dtype_name, to_numpy

__all__ = ["LAYOUTS", "activation_record", "normalise_layout"]

#: At most this many channel/head maps, each at most this many cells a side.
MAX_MAPS = 16
MAX_SIDE = 24


def activation_record(value: Any, token: int = -1, heads: int | None = None, *, layout: str | None = None,
                      hint: str | None = None) -> dict[str, Any]:
    """The record the page draws for one checkpoint (see the module docstring).

    ``layout`` is the author's (it wins); ``hint`` is what the capture knows about the
    producer (``"channels"`` for conv-like layers). A tensor whose layout cannot be
    inferred gets ``layout: None`` and a ``problem`` for the page to warn about.
    """
    array = to_numpy(value)
    if not np.isfinite(array).all():
        raise BadResult(f"the activation (shape {tuple(array.shape)}) has NaN or infinite values")
    chosen = normalise_layout(layout) if layout else _infer(array.shape, hint)
    if isinstance(chosen, tuple):  # (None, reason)
        return {"shape": list(array.shape), "dtype": dtype_name(value), "layout": None, "problem": chosen[1]}
    minimum = {"tokens": 2, "features": 1, "channels": 3, "channels-last": 3, "heads": 3}[chosen]
    if array.ndim < minimum:
        raise BadResult(f"layout {chosen!r} needs at least {minimum} axes; the activation has shape {array.shape}")
    if chosen == "channels-last":  # the same maps, read with the channel axis last
        array, chosen = np.moveaxis(array, -1, -3), "channels"
    record = {"tokens": _tokens, "features": _features, "channels": _maps, "heads": _maps}[chosen](array, token)
    record = {"shape": list(array.shape), "dtype": dtype_name(value), "layout": chosen, "axes": list(LAYOUTS[chosen]),
              **record}
    if heads and chosen == "tokens":
        record["metrics"]["heads"] = int(heads)
    return record


def channel_hints(graph: dict[str, Any], activations: dict[str, Any]) -> dict[str, str]:
    """Where a 4-axis checkpoint keeps its channels, read off the module that made it.

    Libraries differ (Flax convolutions keep channels last, Equinox and PyTorch first), so the
    shapes decide, not the library: the module's 1-D bias-like parameter (``(C,)`` or
    ``(C, 1, 1)``) gives its output-channel count C, and the axis of that size, second or
    last, is the channel axis. Where both or neither match, no hint: the page asks for ``:layout:``.
    """
    counts: dict[str, set[int]] = {}
    kernels: dict[str, list[list[int]]] = {}
    for node in graph.get("layers", []):
        if node.get("op") == "Parameter" and node.get("parent"):
            for out in node.get("outputs") or ():
                shape = out.get("shape") or []
                if shape and all(d == 1 for d in shape[1:]):
                    counts.setdefault(node["parent"], set()).add(int(shape[0]))
                elif len(shape) == 4:
                    kernels.setdefault(node["parent"], []).append(shape)
    hints: dict[str, str] = {}
    for name, value in activations.items():
        shape = tuple(getattr(value, "shape", ()))
        if len(shape) != 4 or name not in counts:
            continue
        first, last = shape[1] in counts[name], shape[3] in counts[name]
        if first != last:
            hints[name] = "channels" if first else "channels-last"
        elif first:  # C x C maps of C channels: the kernel's own layout decides (OIHW or HWIO)
            hints.update({name: hint for hint in _kernel_layouts(kernels.get(name, []), counts[name])})
    return hints


def _kernel_layouts(kernels: list[list[int]], channels: set[int]) -> list[str]:
    """``channels`` for an out-channels-first kernel (PyTorch, Equinox: O, I, kH, kW), and
    ``channels-last`` for an out-channels-last one (Flax, lax: kH, kW, I, O); nothing if unclear."""
    found = {"channels" if k[0] in channels and k[3] not in channels else
             "channels-last" if k[3] in channels and k[0] not in channels else "" for k in kernels}
    return [hint for hint in found if hint] if len(found - {""}) == 1 else []


def _infer(shape: tuple[int, ...], hint: str | None) -> str | tuple[None, str]:
    """The layout a shape can only mean, or (None, why it is ambiguous)."""
    ndim = len(shape)
    if hint in ("channels", "channels-last", "heads") and ndim == 4:
        return hint
    if hint in ("channels", "channels-last") and ndim != 4:  # e.g. a 1-D convolution's [batch, channels, length]
        return (None, f"a convolution output of shape {list(shape)} is not batch x channels x H x W; "
                      "give :layout: (channels x H x W reads the last three axes)")
    if ndim == 1 or (ndim == 2 and shape[0] == 1):
        return "features"
    if ndim in (2, 3):
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


def _pool(matrix: np.ndarray) -> np.ndarray:
    """Mean-pool a 2-D map by whole factors until both sides are at most MAX_SIDE."""
    fy = -(-matrix.shape[0] // MAX_SIDE)
    fx = -(-matrix.shape[1] // MAX_SIDE)
    if fy == 1 and fx == 1:
        return matrix
    h, w = matrix.shape[0] // fy * fy, matrix.shape[1] // fx * fx
    return matrix[:h, :w].reshape(h // fy, fy, w // fx, fx).mean(axis=(1, 3))
