"""Captured attention weights as the kind's data: one ``[T, T]`` map per layer and head (in the worker).

Each capture gives one array per attention call, ``[batch, heads, T, T]`` (a library's),
``[heads, T, T]`` or ``[T, T]`` (a single head). The first batch element is drawn. Calls over
another number of positions than the tokens (a cross-attention, a pooling softmax) are not the
self-attention the figure shows, and are left out. The size limit is checked before the weights
are copied into lists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.words import plural
from ...execute.worker.loader import BadResult
from ...execute.worker.results import dtype_name, to_numpy
from .checks import row_sum_tolerance

#: why a model gave no weights, and what to do (the warning an author reads)
NO_ATTENTION = ("the model computed no attention weights: no softmax over a [..., {T}, {T}] array (queries x keys) "
                "ran, no scaled_dot_product_attention call either, and it returned no attentions. tv-attention "
                "draws self-attention over the {T} input positions; check :model: and :inputs:")


def layer_maps(found: list[Any], length: int | None) -> tuple[list[np.ndarray], str]:
    """Each call's weights as ``[heads, T, T]`` (calls over ``length`` positions only, when given), and
    the dtype they were computed in."""
    dtype = dtype_name(found[0]) if found else "float32"
    kept = self_attention([to_numpy(value) for value in found], length)
    if not kept:
        raise BadResult(NO_ATTENTION.replace("{T}", str(length or "T")))
    return kept, dtype


def self_attention(arrays: list[Any], length: int | None) -> list[Any]:
    """Each array as ``[heads, T, T]`` (a single head gets an axis, a batch gives its first element),
    keeping the calls over ``length`` positions (``None``: the first call's). NumPy only: ``run.py``
    carries a copy."""
    shaped = [a[None] if a.ndim == 2 else a.reshape(-1, *a.shape[-3:])[0] if a.ndim > 3 else a for a in arrays]
    if length is None and shaped:
        length = shaped[0].shape[-1]
    return [a for a in shaped if a.shape[-1] == length]


def chosen_maps(maps: list[Any], layers: list[int], heads: list[int]) -> list[tuple[int, int, Any]]:
    """(layer, head, weights) of the chosen layers and heads, layer by layer."""
    return [(layer, head, maps[layer][head]) for layer in layers for head in heads]


def _chosen(wanted: list[int] | None, count: int, what: str) -> list[int]:
    """The ``:layers:`` or ``:heads:`` subset, checked against what the model has."""
    if not wanted:
        return list(range(count))
    bad = [n for n in wanted if not 0 <= n < count]
    if bad:
        raise BadResult(f":{what}s: {', '.join(map(str, bad))} not in the model, which has "
                        f"{plural(count, what)} (numbered 0 to {count - 1})")
    return list(wanted)


def attention_data(maps: list[np.ndarray], dtype: str, tokens: list[str], options: dict[str, Any],
                   check_size: Callable[[int, int], None]) -> dict[str, Any]:
    """``data`` for the grid: the chosen layers and heads, each weight a JSON number."""
    length = maps[0].shape[-1]
    if len(tokens) != length:
        raise BadResult(f":tokens: gives {plural(len(tokens), 'label')} for {plural(length, 'position')}")
    layers = _chosen(options.get("layers"), len(maps), "layer")
    head_count = min(m.shape[0] for m in (maps[n] for n in layers))
    heads = _chosen(options.get("heads"), head_count, "head")
    check_size(len(layers) * len(heads), length)
    chosen = chosen_maps(maps, layers, heads)
    if not all(np.isfinite(weights).all() for _, _, weights in chosen):
        raise BadResult("an attention map has NaN or infinite weights")
    # a learned sink (GPT-OSS) takes part of each query's weight and is no token: rows sum below one
    sink = any((weights.sum(-1) < 1 - row_sum_tolerance(dtype)).any() for _, _, weights in chosen)
    return {
        "kind": "attention",
        "tokens": tokens,
        "maps": [{"layer": layer, "head": head, "weights": [[float(w) for w in row] for row in weights]}
                 for layer, head, weights in chosen],
        "dtype": dtype,
        **({"learnedSink": True} if sink else {}),
    }
