"""Figures computed with the library models: attention weights as the library returns them."""

from __future__ import annotations

import numpy as np
import torch

from hf_models import tiny_llama, tiny_vit


def llama_attention(seed: int = 0) -> dict:
    """Head 0's attention weights in the first layer for six tokens, as the library computes them."""
    model = tiny_llama(seed=seed).eval()
    with torch.no_grad():
        out = model(input_ids=torch.arange(6).unsqueeze(0), output_attentions=True, use_cache=False)
    return {"values": out.attentions[0][0, 0]}


def vit_attention(seed: int = 0) -> dict:
    """Head 0's attention in ViT's first layer: the class token and 16 patches, no mask."""
    model = tiny_vit(seed=seed).eval()
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        out = model(pixel_values=torch.randn(1, 3, 16, 16, generator=generator), output_attentions=True)
    return {"values": out.attentions[0][0, 0],
            "rows": ["CLS"] + [f"patch {i}" for i in range(16)], "columns": ["CLS"] + [f"p{i}" for i in range(16)]}


def check_rows_sum_to_one(weights: np.ndarray) -> dict:
    """Every query's attention weights sum to one."""
    diff = float(np.abs(weights.sum(axis=1) - 1).max())
    return {"passed": diff < 1e-5, "value": diff, "tolerance": 1e-5}


def check_future_is_zero(weights: np.ndarray) -> bool:
    """No query attends to a later token."""
    return bool((np.triu(weights, k=1) == 0).all())
