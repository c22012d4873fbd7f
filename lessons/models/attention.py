"""Causal self-attention in PyTorch, written out step by step for the course.

Used by the lessons on attention scores, multi-head attention and the KV cache.
"""

import math

import torch
from torch import nn

TOKENS, WIDTH = 6, 8


def causal_mask(length):
    """True where a query may look: at itself and at earlier positions."""
    return torch.tril(torch.ones(length, length, dtype=torch.bool))


def attention_weights(q, k, causal=True):
    """softmax(q k^T / sqrt(d)), with future positions set to -inf before the softmax."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~causal_mask(q.shape[-2]), float("-inf"))
    return torch.softmax(scores, dim=-1)


def causal_weights(seed):
    """Attention weights of one head over six random tokens."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(TOKENS, WIDTH, generator=generator)
    w_q = torch.randn(WIDTH, WIDTH, generator=generator) / math.sqrt(WIDTH)
    w_k = torch.randn(WIDTH, WIDTH, generator=generator) / math.sqrt(WIDTH)
    return attention_weights(x @ w_q, x @ w_k)


def check_rows_sum_to_one(weights):
    """Every query's weights sum to one (softmax)."""
    error = float(abs(weights.sum(axis=1) - 1).max())
    return {"passed": error < 1e-6, "value": error, "tolerance": 1e-6,
            "description": "Each row of attention weights sums to 1"}


def check_future_is_zero(weights):
    """Above the diagonal (later tokens) every weight is exactly zero."""
    largest = float(abs(weights[~causal_mask(weights.shape[0]).numpy()]).max())
    return {"passed": largest == 0.0, "value": largest, "tolerance": 0.0,
            "description": "Weights on later tokens are exactly zero"}


class MultiHeadAttention(nn.Module):
    """Split the width into heads, attend in each head separately, merge and project."""

    def __init__(self, width=16, heads=4):
        super().__init__()
        self.heads, self.head_dim = heads, width // heads
        self.query = nn.Linear(width, width, bias=False)
        self.key = nn.Linear(width, width, bias=False)
        self.value = nn.Linear(width, width, bias=False)
        self.project = nn.Linear(width, width, bias=False)

    def split(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        mixed = attention_weights(q, k) @ v
        batch, _, length, _ = mixed.shape
        return self.project(mixed.transpose(1, 2).reshape(batch, length, -1))


def head_weights(seed):
    """The last token's attention weights in each of four heads (rows: heads)."""
    torch.manual_seed(seed)
    attention = MultiHeadAttention()
    x = torch.randn(1, TOKENS, 16)
    with torch.no_grad():
        q, k = attention.split(attention.query(x)), attention.split(attention.key(x))
        return attention_weights(q, k)[0, :, -1, :]


@torch.no_grad()
def check_matches_pytorch(model):
    """Our heads give the same output as PyTorch's fused scaled_dot_product_attention."""
    x = torch.randn(1, TOKENS, 16, generator=torch.Generator().manual_seed(3))
    q, k, v = model.split(model.query(x)), model.split(model.key(x)), model.split(model.value(x))
    fused = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    batch, _, length, _ = fused.shape
    reference = model.project(fused.transpose(1, 2).reshape(batch, length, -1))
    error = float((model(x) - reference).abs().max())
    return {"passed": error < 1e-6, "value": error, "tolerance": 1e-6,
            "description": "Our multi-head attention matches torch's scaled_dot_product_attention"}


class CachedAttention(MultiHeadAttention):
    """The same attention, able to run one new token at a time with a cache of past keys and values."""

    def step(self, x_new, cache):
        q = self.split(self.query(x_new))
        k, v = self.split(self.key(x_new)), self.split(self.value(x_new))
        if cache:
            k, v = torch.cat([cache["k"], k], dim=2), torch.cat([cache["v"], v], dim=2)
        cache.update(k=k, v=v)
        # the new token may see every cached position: no mask needed for a single query
        weights = attention_weights(q, k, causal=False)
        batch, _, length, _ = q.shape
        return self.project((weights @ v).transpose(1, 2).reshape(batch, length, -1)), weights


@torch.no_grad()
def cached_vs_full(seed):
    """Per decoding step (rows), the largest difference between cached and full outputs per feature."""
    torch.manual_seed(seed)
    attention = CachedAttention()
    x = torch.randn(1, TOKENS, 16)
    full = attention(x)
    cache, rows = {}, []
    for t in range(TOKENS):
        out, _ = attention.step(x[:, t : t + 1], cache)
        rows.append((out[0, 0] - full[0, t]).abs())
    return torch.stack(rows)


def check_cache_matches(differences):
    """Decoding token by token with the cache gives the full-sequence outputs."""
    worst = float(differences.max())
    return {"passed": worst < 1e-6, "value": worst, "tolerance": 1e-6,
            "description": "Cached one-token-at-a-time outputs equal the full-sequence outputs"}


@torch.no_grad()
def cached_weights(seed):
    """Attention weights of head 0 at each decoding step, padded with zeros where the cache is shorter."""
    torch.manual_seed(seed)
    attention = CachedAttention()
    x = torch.randn(1, TOKENS, 16)
    cache, rows = {}, []
    for t in range(TOKENS):
        _, weights = attention.step(x[:, t : t + 1], cache)
        row = torch.zeros(TOKENS)
        row[: t + 1] = weights[0, 0, 0]
        rows.append(row)
    return torch.stack(rows)
