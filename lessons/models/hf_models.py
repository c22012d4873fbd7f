"""Hugging Face ``transformers`` models as the library ships them, built from tiny configs.

Nothing here changes a model: the factories only choose a config and a seed (random weights, no
download), so every node of the traced graphs links into the library's own files. The lessons'
claims live in ``hf_claims.py``.
"""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM, ViTConfig, ViTModel

#: Llama: 4 query heads share 2 key/value heads (grouped-query attention), head dimension 8.
LLAMA = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64)
#: ViT: a 16×16 RGB image cut into 4×4 patches, so 16 patch tokens plus the class token.
VIT = dict(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
           num_attention_heads=4, intermediate_size=64)


def tiny_llama(attention: str = "eager", seed: int = 0) -> LlamaForCausalLM:
    """``LlamaForCausalLM`` with grouped-query attention; ``eager`` spells attention out in ops."""
    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(**LLAMA, attn_implementation=attention))


def tiny_vit(attention: str = "eager", seed: int = 0) -> ViTModel:
    """``ViTModel`` (no classification head) for 16×16 images in 4×4 patches."""
    torch.manual_seed(seed)
    return ViTModel(ViTConfig(**VIT, attn_implementation=attention), add_pooling_layer=False)
