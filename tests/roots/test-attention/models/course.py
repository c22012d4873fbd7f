"""Attention written as the course writes it: explicit softmax, or PyTorch's fused kernel."""

import torch
from torch import nn

#: the logit that makes a key take (almost) all of a query's weight
SHARP = 12.0


def target_logits(ids):
    """[3, T, T] logits: head 0 looks at the previous token, head 1 at itself, head 2 at the token
    after the previous occurrence of the query's token (itself when there is none)."""
    length = ids.shape[-1]
    logits = torch.zeros(3, length, length)
    for query in range(length):
        logits[0, query, max(query - 1, 0)] = SHARP
        logits[1, query, query] = SHARP
        earlier = [k for k in range(query) if ids[0, k] == ids[0, query]]
        logits[2, query, earlier[-1] + 1 if earlier else query] = SHARP
    return logits


class Patterned(nn.Module):
    """Three hand-set heads over causal attention; its output is the weighted token embeddings."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 4)

    def forward(self, ids):
        logits = target_logits(ids)
        length = ids.shape[-1]
        future = torch.ones(length, length, dtype=torch.bool).triu(1)
        weights = torch.softmax(logits.masked_fill(future, float("-inf")), dim=-1)
        return weights @ self.embed(ids)[0]


def check_rows_sum_to_one(weights):
    """Every query's weights sum to one in every drawn head."""
    return bool(abs(weights.sum(-1) - 1).max() < 1e-5)


class MultiHeadAttention(nn.Module):
    def __init__(self, width=16, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(width, 3 * width), nn.Linear(width, width)

    def split(self, x):
        batch, length, width = x.shape
        return x.view(batch, length, self.heads, width // self.heads).transpose(1, 2)

    def forward(self, x):
        q, k, v = (self.split(t) for t in self.qkv(x).chunk(3, dim=-1))
        scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)
        future = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)
        weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return self.out((weights @ v).transpose(1, 2).reshape(x.shape))


class FusedStack(nn.Module):
    """Two layers of 2-head attention through F.scaled_dot_product_attention (no weights returned)."""

    def __init__(self, width=16):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, 3 * width) for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            q, k, v = (t.view(1, x.shape[1], 2, -1).transpose(1, 2) for t in layer(x).chunk(3, dim=-1))
            x = x + nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(x.shape)
        return x


class NoAttention(nn.Module):
    """A model without attention: an MLP over token embeddings."""

    def __init__(self):
        super().__init__()
        self.embed, self.mlp = nn.Embedding(8, 4), nn.Linear(4, 4)

    def forward(self, ids):
        return torch.softmax(self.mlp(self.embed(ids)), dim=-1)


class HalfPrecision(nn.Module):
    """The lessons' attention computed in bfloat16, as a model loaded in half precision is."""

    def __init__(self):
        super().__init__()
        self.inner = MultiHeadAttention(16, 2).to(torch.bfloat16)

    def forward(self, x):
        return self.inner(x.to(torch.bfloat16))
