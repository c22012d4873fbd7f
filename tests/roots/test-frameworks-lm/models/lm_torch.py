"""A tiny causal language model as a course writes it in PyTorch: token and position embeddings,
``layers`` of pre-norm blocks (causal attention, then a GELU MLP, each added to the residual stream),
a final norm and an unembedding."""

import math

import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        b, t, w = x.shape
        split = lambda y: y.view(b, t, self.heads, w // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(w // self.heads)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        weights = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(b, t, w))


class MLP(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.fc, self.proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        return self.proj(nn.functional.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(width), Attention(width, heads)
        self.norm2, self.mlp = nn.LayerNorm(width), MLP(width)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, vocabulary: int, width: int, layers: int, heads: int, length: int):
        super().__init__()
        self.embed, self.position = nn.Embedding(vocabulary, width), nn.Embedding(length, width)
        self.layers = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(width)
        self.unembed = nn.Linear(width, vocabulary, bias=False)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.unembed(self.norm(x))


def make(vocabulary: int = 12, width: int = 16, layers: int = 2, heads: int = 2, length: int = 16):
    return TinyLM(vocabulary, width, layers, heads, length)
