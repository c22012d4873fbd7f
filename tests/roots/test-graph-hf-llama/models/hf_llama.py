"""A transformers LlamaForCausalLM from a tiny config with random weights, returning its logits.

Why a wrapper: until capture accepts the ``ModelOutput`` that transformers models return (issue 10),
the figure needs a tensor; ``.logits`` is the one a lesson shows.
"""

from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM


class TinyHFLlama(nn.Module):
    def __init__(self, layers: int = 2, width: int = 32) -> None:
        super().__init__()
        config = LlamaConfig(vocab_size=64, hidden_size=width, intermediate_size=2 * width,
                             num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                             max_position_embeddings=32)
        self.llama = LlamaForCausalLM(config)

    def forward(self, ids):
        return self.llama(ids, use_cache=False).logits
