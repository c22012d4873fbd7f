"""Unmodified transformers causal LMs from tiny configs (random weights, no hub download)."""

import torch
from transformers import (
    Gemma2Config,
    Gemma2ForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
)

SMALL = {"vocab_size": 32, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 2,
         "num_attention_heads": 2, "max_position_embeddings": 32}


def llama(seed=0):
    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(**SMALL, num_key_value_heads=1))


def mistral(seed=0):
    torch.manual_seed(seed)
    return MistralForCausalLM(MistralConfig(**SMALL, num_key_value_heads=1, head_dim=8))


def qwen2(seed=0):
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(Qwen2Config(**SMALL, num_key_value_heads=1))


def gpt_neox(seed=0):
    torch.manual_seed(seed)
    return GPTNeoXForCausalLM(GPTNeoXConfig(**SMALL))


def gpt2(seed=0):
    torch.manual_seed(seed)
    return GPT2LMHeadModel(GPT2Config(vocab_size=32, n_positions=32, n_embd=16, n_layer=3, n_head=2,
                                      bos_token_id=0, eos_token_id=0))


def opt(seed=0):
    """OPT registers its final norm before its layers."""
    torch.manual_seed(seed)
    return OPTForCausalLM(OPTConfig(vocab_size=32, hidden_size=16, ffn_dim=32, num_hidden_layers=2,
                                    num_attention_heads=2, word_embed_proj_dim=16))


def gemma2(seed=0):
    """Gemma 2 soft-caps its logits after the unembedding (``final_logit_softcapping``); a cap this small
    (random weights give small logits) makes the cap change them, as a trained model's large logits do."""
    torch.manual_seed(seed)
    return Gemma2ForCausalLM(Gemma2Config(**SMALL, num_key_value_heads=1, head_dim=8, final_logit_softcapping=0.05))


def gemma2_unembed(model, hidden):
    """Gemma 2's read-out: the unembedding, then the model's soft-cap of the logits."""
    cap = model.config.final_logit_softcapping
    return torch.tanh(model.lm_head(hidden) / cap) * cap


def letters(ids):
    """A label per token id: a lower-case letter, then its id."""
    return ["abcdefghijklmnopqrstuvwxyz"[n] if n < 26 else f"t{n}" for n in ids]
