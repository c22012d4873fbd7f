"""Every attention layer's weights from one PyTorch forward pass, for any model.

Two ways, tried in order, neither knowing a model class:

1. A transformers model (it has ``set_attn_implementation``, the library's generic switch) is set
   to the ``eager`` implementation, which is the one that computes the weights (SDPA and flash
   kernels never materialise them), and called with ``output_attentions=True``; what it returns
   in ``attentions`` is what the library says the attention was.
2. Any other model (the course's own, or a library model that returns no attentions) runs under a
   :class:`~torch.overrides.TorchFunctionMode` that keeps every softmax over the last axis whose
   last two axes are square (queries x keys), and turns each fused
   ``F.scaled_dot_product_attention`` call into its explicit weights (the call itself still runs
   as written, so the model's output is unchanged).

This module uses nothing but the standard library and PyTorch: ``run.py`` carries a copy of its
definitions (:mod:`.reproduce`), so a reader repeats the capture without this package.
"""

from __future__ import annotations

import math
from typing import Any


def torch_attention(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The attention weights of each attention call, in call order, as float tensors ``[..., T, T]``."""
    import torch

    if hasattr(model, "eval"):
        model.eval()
    with torch.no_grad():
        returned = _library_attentions(model, args, kwargs)
        if returned:
            return returned
        return _captured_attentions(model, args, kwargs)


def _library_attentions(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any] | None:
    """What a transformers model returns with ``output_attentions=True`` (``None``: not such a
    model, or it returned no weights)."""
    switch = getattr(model, "set_attn_implementation", None)
    if not callable(switch):
        return None
    try:
        switch("eager")
    except (ValueError, NotImplementedError):  # a model that cannot switch: capture its softmax instead
        return None
    output = model(*args, **{"output_attentions": True, **kwargs})
    found = getattr(output, "attentions", None)
    if not found or any(weights is None for weights in found):
        return None
    return [weights.detach() for weights in found]


def _captured_attentions(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """Run the model once under :func:`attention_mode` and return what it kept."""
    mode, found = attention_mode()
    with mode:
        model(*args, **kwargs)
    return found


def attention_mode() -> tuple[Any, list[Any]]:
    """A ``TorchFunctionMode`` that keeps attention weights, and the list it appends them to."""
    import torch
    import torch.nn.functional as F  # noqa: N812 - PyTorch's own spelling
    from torch.overrides import TorchFunctionMode

    softmaxes = {torch.softmax, F.softmax, torch.Tensor.softmax, torch.special.softmax}
    found: list[Any] = []

    class AttentionCapture(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            if func is F.scaled_dot_product_attention:
                found.append(sdpa_weights(*args, **kwargs))
                return func(*args, **kwargs)
            result = func(*args, **kwargs)
            if func in softmaxes and _over_keys(result, args, kwargs):
                found.append(result.detach())  # in its own dtype, which the artifact records
            return result

    return AttentionCapture(), found


def _over_keys(result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """A softmax over the last axis of a ``[..., T, T]`` tensor: a query's weights over the keys."""
    shape = getattr(result, "shape", ())
    if len(shape) < 2 or shape[-1] != shape[-2]:
        return False
    dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    return dim in (-1, len(shape) - 1)


def sdpa_weights(query: Any, key: Any, value: Any = None, attn_mask: Any = None, dropout_p: float = 0.0,
                 is_causal: bool = False, scale: float | None = None, enable_gqa: bool = False) -> Any:
    """The weights ``F.scaled_dot_product_attention`` applies, as its documentation defines them
    (dropout left out: a figure is drawn in evaluation mode)."""
    import torch

    query, key = query.detach().float(), key.detach().float()
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        key = key.repeat_interleave(query.shape[-3] // key.shape[-3], dim=-3)
    scores = query @ key.transpose(-2, -1) * (scale if scale is not None else 1 / math.sqrt(query.shape[-1]))
    length, source = query.shape[-2], key.shape[-2]
    if is_causal:
        allowed = torch.ones(length, source, dtype=torch.bool).tril(diagonal=0)
        scores = scores.masked_fill(~allowed, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask.float()
    return torch.softmax(scores, dim=-1)
