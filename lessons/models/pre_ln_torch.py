"""A single-head pre-LN transformer block in PyTorch: 4 tokens x 8 features, feed-forward 8 -> 16 -> 8.

The same block as ``pre_ln_nnx.py``, written the way a PyTorch course writes it; the two are checked
to compute the same thing (``two-frameworks.md``).
"""

import math

import torch
from torch import nn


class PreLNBlock(nn.Module):
    def __init__(self, width: int = 8, hidden: int = 16):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))
        self.ln2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def attention(self, h):
        """Scores QK^T / sqrt(d), later positions masked, softmax, weighted values, projection."""
        scores = self.q(h) @ self.k(h).T / math.sqrt(h.shape[-1])
        causal = torch.ones(h.shape[0], h.shape[0], dtype=torch.bool).tril()
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        return self.o(weights @ self.v(h))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))


def make(width: int = 8, hidden: int = 16):
    return PreLNBlock(width, hidden)


def check_causal(block):
    """Changing the last token leaves the outputs of every earlier token unchanged."""
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    changed = x.clone()
    changed[-1] = 10.0
    with torch.no_grad():
        difference = float((block(x)[:-1] - block(changed)[:-1]).abs().max())
    return {"passed": difference < 1e-5, "value": difference, "tolerance": 1e-5}
