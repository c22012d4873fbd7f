"""A tiny causal LM for tv-lens and tv-patch: embeddings, attention blocks (an MLP if asked), a final
norm and an unembedding, the shape the shared piece finder (``execute/worker/causal_lm.py``) knows."""

import torch
from torch import nn

VOCABULARY, WIDTH, LENGTH = 12, 8, 8


class Attention(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.out = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        batch, length, _ = x.shape
        future = torch.ones(length, length, dtype=torch.bool).triu(1)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(future, float("-inf"))
        return self.out((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(batch, length, WIDTH))


class Block(nn.Module):
    def __init__(self, heads, mlp):
        super().__init__()
        self.attn = Attention(heads)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 2 * WIDTH), nn.GELU(), nn.Linear(2 * WIDTH, WIDTH)) if mlp else None

    def forward(self, x):
        x = x + self.attn(x)
        return x + self.mlp(x) if self.mlp is not None else x


class LM(nn.Module):
    def __init__(self, layers, heads, mlp):
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, WIDTH)
        self.position = nn.Embedding(LENGTH, WIDTH)
        self.blocks = nn.ModuleList(Block(heads, mlp) for _ in range(layers))
        self.norm = nn.LayerNorm(WIDTH)
        self.unembed = nn.Linear(WIDTH, VOCABULARY)

    def forward(self, ids, scale=1.0):
        x = scale * self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.unembed(self.norm(x))


def make_model(layers=2, heads=2, mlp=False, seed=0):
    torch.manual_seed(seed)
    return LM(layers, heads, mlp).eval()


def make_mlp(layers=2, heads=2, seed=0):
    return make_model(layers, heads, mlp=True, seed=seed)


def letters(ids):
    return ["ABCDEFGHIJKL"[n] for n in ids]


def unembed(model, hidden):
    """The unembedding written as a function (the :unembed: variant)."""
    return model.unembed(hidden)


def finite(values):
    """Every drawn number is finite (a check of the lens's probabilities or the patching effects)."""
    import numpy as np

    return {"passed": bool(np.isfinite(values).all()), "description": "Every value is finite"}
