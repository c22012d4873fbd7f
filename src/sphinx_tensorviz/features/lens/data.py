"""Read-out logits as the kind's data: the target's probability and the top-k tokens at every layer
and position (in the worker).

The logits of each layer (``[positions, vocabulary]``, as :mod:`.lens_torch` or :mod:`.lens_jax`
read them out) become probabilities here, in float64 NumPy, whatever the framework: a softmax in
one place, so a PyTorch and a JAX lens, a build and ``run.py``, compute it alike. Ties in the top-k
are broken by the lower token id (a stable sort), so a rebuild writes the same ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...core.words import plural
from ...execute.worker.loader import BadResult


def softmax(logits: Any) -> Any:
    """Probabilities over the last axis (float64; the largest logit is subtracted first). NumPy only:
    ``run.py`` carries a copy."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def positions_and_targets(ids: Sequence[int], target: Any) -> tuple[list[int], list[int]]:
    """The drawn positions and the target token at each. By default each position's target is the next
    input token, so the last position (which has none) is left out; ``:target:`` gives one id for every
    position, or one per position. NumPy only: ``run.py`` carries a copy."""
    count = len(ids)
    if target is None:
        return list(range(count - 1)), [int(n) for n in ids[1:]]
    if isinstance(target, int):
        return list(range(count)), [target] * count
    return list(range(count)), [int(n) for n in target]


def lens_arrays(logits: Sequence[Any], ids: Sequence[int], target: Any,
                k: int) -> tuple[Any, Any, Any, list[int], list[int]]:
    """(target probabilities ``[layers, positions]``, top-k ids and their probabilities
    ``[layers, positions, k]``, positions, targets) of every layer's read-out logits ``[T, V]``.
    NumPy only: ``run.py`` carries a copy."""
    positions, targets = positions_and_targets(ids, target)
    probs = np.stack([softmax(layer)[positions] for layer in logits])  # [layers, positions, vocabulary]
    chosen = np.take_along_axis(probs, np.asarray(targets)[None, :, None], axis=-1)[..., 0]
    order = np.argsort(-probs, axis=-1, kind="stable")[..., :k]
    return chosen, order, np.take_along_axis(probs, order, axis=-1), positions, targets


def check_targets(ids: list[int], target: Any, vocabulary: int) -> None:
    """A target the lens can draw: there is a next token, a list fits the positions, ids exist."""
    if target is None and len(ids) < 2:
        raise BadResult("one token has no next token to predict: give two or more :inputs:, or a :target:")
    if isinstance(target, list) and len(target) != len(ids):
        raise BadResult(f":target: gives {plural(len(target), 'token')} for {plural(len(ids), 'position')}; "
                        "give one per input token, or one id for all")
    wanted = [target] if isinstance(target, int) else target or ids
    bad = sorted({n for n in wanted if not 0 <= n < vocabulary})
    if bad:
        which = ":target:" if target is not None else ":inputs:"
        raise BadResult(f"{which} token {', '.join(map(str, bad))} not in the model's vocabulary of {vocabulary} "
                        f"(ids 0 to {vocabulary - 1})")


def lens_data(logits: list[Any], dtype: str, ids: list[int], tokens: list[str], options: dict[str, Any],
              vocabulary: Callable[[list[int]], list[str]] | None, pieces: dict[str, str],
              check_size: Callable[[int, int], None]) -> tuple[dict[str, Any], Any, Any]:
    """``data`` for the figure (``pieces``: how the residual stream and the read-out were found, in words),
    and the arrays the checks receive (target probabilities, top-1 ids)."""
    if len(tokens) != len(ids):
        raise BadResult(f":tokens: gives {plural(len(tokens), 'label')} for {plural(len(ids), 'position')}")
    if not all(np.isfinite(layer).all() for layer in logits):
        raise BadResult("the read-out logits have NaN or infinite values")
    check_targets(ids, options.get("target"), logits[0].shape[-1])
    positions = len(ids) if options.get("target") is not None else len(ids) - 1
    check_size(len(logits), positions)
    chosen, top_ids, top_probs, positions_, targets = lens_arrays(logits, ids, options.get("target"),
                                                                  min(options.get("top_k") or 5, logits[0].shape[-1]))
    data: dict[str, Any] = {
        "kind": "lens",
        "tokens": tokens,
        "inputs": ids,
        "positions": positions_,
        "targets": targets,
        **pieces,
        "probabilities": chosen.tolist(),
        "topIds": top_ids.tolist(),
        "topProbabilities": top_probs.tolist(),
        "dtype": dtype,
    }
    if vocabulary is not None:
        data["vocabulary"] = vocabulary_labels(vocabulary, sorted({*targets, *top_ids.ravel().tolist()}))
    return data, chosen, top_ids[..., 0]


def vocabulary_labels(function: Callable[[list[int]], list[str]], ids: list[int]) -> dict[str, str]:
    """``{id: label}`` of the ids the figure names, from ``:vocabulary:`` (ids -> labels)."""
    labels = function(ids)
    if not isinstance(labels, (list, tuple)) or len(labels) != len(ids):
        raise BadResult(f":vocabulary: returned {type(labels).__name__} for {plural(len(ids), 'id')}; "
                        "it takes a list of token ids and returns a list of as many labels")
    return {str(n): str(label) for n, label in zip(ids, labels)}
