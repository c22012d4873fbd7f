"""Checks about the transformers models, kept out of the model files."""

from __future__ import annotations

import torch


def check_causal(model) -> dict:
    """Changing the last token leaves the logits of earlier tokens unchanged."""
    ids = torch.arange(6).unsqueeze(0) % model.config.vocab_size
    changed = ids.clone()
    changed[0, -1] = (changed[0, -1] + 1) % model.config.vocab_size
    with torch.no_grad():
        a = model(input_ids=ids, use_cache=False).logits
        b = model(input_ids=changed, use_cache=False).logits
    diff = float((a[0, :-1] - b[0, :-1]).abs().max())
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}


def check_gqa(model) -> bool:
    """Two query heads share each key/value head."""
    config = model.config
    return config.num_attention_heads // config.num_key_value_heads == 2
