"""Tiny, randomly initialised ``transformers`` models, built from configs (no hub download)."""

from __future__ import annotations

import torch
from transformers import (
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    ViTConfig,
    ViTModel,
)


def tiny_llama(layers: int = 2, attention: str = "sdpa", seed: int = 0) -> LlamaForCausalLM:
    """A 2-layer Llama with grouped-query attention: 4 query heads share 2 key/value heads."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         attn_implementation=attention)
    return LlamaForCausalLM(config)


def tiny_gpt2(seed: int = 0) -> GPT2LMHeadModel:
    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=4))


def tiny_bert(seed: int = 0) -> BertModel:
    torch.manual_seed(seed)
    return BertModel(BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                intermediate_size=64, max_position_embeddings=32))


def tiny_vit(seed: int = 0) -> ViTModel:
    torch.manual_seed(seed)
    return ViTModel(ViTConfig(image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
                              num_attention_heads=4, intermediate_size=64))
