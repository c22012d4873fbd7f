"""What ``tensorviz verify`` compares of a logit lens: inputs, positions and targets exactly; the
probabilities and the top-k probabilities within the tolerance of the dtype the logits were in; and
the top-1 token where it is clear (its probability ahead of the second's by more than that tolerance:
a near tie may swap on another CPU and still be the same model)."""

from __future__ import annotations

from typing import Any

from ...execute.compare import Comparison
from ...execute.tolerance import ASSUMED_DTYPE, default_tolerance


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    for name in ("inputs", "positions", "targets"):
        cmp.equal(old.get(name), new.get(name), f"data.{name}")
    cmp.array(old["probabilities"], new.get("probabilities", []), "data.probabilities", old.get("dtype"))
    cmp.array(old["topProbabilities"], new.get("topProbabilities", []), "data.topProbabilities", old.get("dtype"))
    cmp.equal(clear_top1(old, old.get("dtype")), clear_top1(new, old.get("dtype"), like=old), "data.topIds (clear top-1)")


def clear_top1(data: dict[str, Any], dtype: str | None, like: dict[str, Any] | None = None) -> list[list[int | None]]:
    """Each cell's top-1 id, or ``None`` where ``like``'s (else its own) top two are within the tolerance."""
    rtol, atol = default_tolerance(dtype or ASSUMED_DTYPE, 1.0)  # probabilities: at most 1
    gap = atol + rtol
    reference = like or data
    return [[ids[0] if len(probs) < 2 or probs[0] - probs[1] > gap else None
             for ids, probs in zip(layer_ids, layer_probs)]
            for layer_ids, layer_probs in zip(data.get("topIds", []), reference["topProbabilities"])]
