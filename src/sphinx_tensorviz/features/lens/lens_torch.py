"""Each block's output of one PyTorch forward pass, read out through the final norm and unembedding.

Forward hooks on the blocks keep their outputs (the residual stream after each), in the order the
blocks run; the model runs in eval mode (no dropout: the lens reads what the model predicts) and
without gradients. Hooks are removed however the pass ends.
"""

from __future__ import annotations

from typing import Any

from ...execute.worker.causal_lm import CausalLMParts, first_tensor
from ...execute.worker.loader import BadResult
from ...execute.worker.results import dtype_name


def torch_lens(model: Any, parts: CausalLMParts, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> tuple[list[Any], str, Any]:
    """Every layer's read-out logits ``[T, V]`` (first batch row), the dtype they are in, and what the
    model itself returned (its logits are what the last row must be)."""
    import torch

    kept: dict[int, Any] = {}

    def keeper(index: int) -> Any:
        def keep(_module: Any, _args: Any, output: Any) -> None:
            if index in kept:
                raise BadResult(f"layer {index}'s block ran twice in one forward pass; name the blocks whose "
                                "outputs are the residual stream with :residual:")
            kept[index] = first_tensor(output)
        return keep

    model.eval()
    handles = [layer.block.register_forward_hook(keeper(n)) for n, layer in enumerate(parts.layers)]
    try:
        with torch.no_grad():
            output = model(*args, **kwargs)
            missing = [n for n in range(len(parts.layers)) if n not in kept]
            if missing:
                raise BadResult(f"layer {missing[0]}'s block did not run in the forward pass; name the blocks "
                                "with :residual:")
            logits = [parts.read_out(kept[n])[0] for n in range(len(parts.layers))]
    finally:
        for handle in handles:
            handle.remove()
    return logits, dtype_name(logits[-1]), output
