"""A model without the shared shape: its blocks are in a plain list (no ModuleList), its final norm
is not beside them, and its unembedding is the embedding's matrix (tied), so nothing is found by
shape and the page names every piece."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.mix = nn.Linear(width, width)

    def forward(self, x):
        return x + torch.tanh(self.mix(x))


class Named(nn.Module):
    def __init__(self, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.embed = nn.Embedding(8, 12)
        self.stack = [Block(12), Block(12), Block(12)]  # a Python list: no ModuleList to find
        for n, block in enumerate(self.stack):
            self.add_module(f"block{n}", block)
        self.last_norm = nn.LayerNorm(12)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.stack:
            x = block(x)
        return tied_unembed(self, self.last_norm(x))


def tied_unembed(model, hidden):
    """Logits by the embedding's own matrix (weight tying)."""
    return hidden @ model.embed.weight.T


def one_row_per_layer(probabilities):
    """The lens has a row per block (3) and a column per position but the last (5); each cell's top-1
    id is a token of the vocabulary."""
    return (probabilities.shape == (3, 5) and probabilities.top1.shape == (3, 5)
            and bool(((probabilities.top1 >= 0) & (probabilities.top1 < 8)).all()))
