"""TinyLlama: one LLaMA-1-style decoder block, small enough to read in one sitting.

Vocabulary 32, width 16, 4 attention heads, rotary position embeddings (RoPE),
RMSNorm, a SwiGLU feed-forward network with 40 hidden features, one decoder block,
a final RMSNorm and an untied output head. The weights are random: the token ids
have no meaning, but every numerical property checked at the bottom still holds.
"""

import copy
import math

import torch
from torch import nn


class RMSNorm(nn.Module):
    """Rescale each token's features to root-mean-square 1, then apply a learned gain."""

    def __init__(self, width: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(torch.ones(width))

    def forward(self, x):
        # Unlike LayerNorm there is no mean subtraction and no bias: only a scale.
        inverse_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return torch.mul(x * inverse_rms, self.gain)


class Rotary(nn.Module):
    """Rotate feature pairs by an angle that grows with the token's position (RoPE)."""

    def __init__(self, head_dim: int, base: float = 10000.0):
        super().__init__()
        self.head_dim = head_dim
        self.base = base

    def forward(self, x):
        # x: (batch, heads, tokens, head_dim). Pair i turns at its own frequency.
        position = torch.arange(x.shape[-2], dtype=x.dtype)
        pair = torch.arange(0, self.head_dim, 2, dtype=x.dtype)
        angle = torch.outer(position, torch.pow(self.base, -pair / self.head_dim))
        cos, sin = torch.cos(angle), torch.sin(angle)
        even, odd = x[..., 0::2], x[..., 1::2]
        # A 2-D rotation of every (even, odd) pair, interleaved back into place.
        return torch.stack(
            (torch.sub(torch.mul(even, cos), torch.mul(odd, sin)),
             torch.add(torch.mul(even, sin), torch.mul(odd, cos))),
            dim=-1,
        ).flatten(-2)


class Attention(nn.Module):
    """Causal multi-head self-attention with rotary positions on queries and keys."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = width // heads
        self.query = nn.Linear(width, width, bias=False)
        self.key = nn.Linear(width, width, bias=False)
        self.value = nn.Linear(width, width, bias=False)
        self.query_rope = Rotary(self.head_dim)
        self.key_rope = Rotary(self.head_dim)
        self.softmax = nn.Softmax(dim=-1)
        self.project = nn.Linear(width, width, bias=False)

    def split_heads(self, x):
        batch, tokens, _ = x.shape
        return x.view(batch, tokens, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        batch, tokens, width = x.shape
        q = self.query_rope(self.split_heads(self.query(x)))
        k = self.key_rope(self.split_heads(self.key(x)))
        v = self.split_heads(self.value(x))
        scores = torch.div(q @ k.transpose(-2, -1), math.sqrt(self.head_dim))
        # Causal mask: a token may only look at itself and earlier tokens.
        future = torch.ones(tokens, tokens, dtype=torch.bool).triu(1)
        weights = self.softmax(scores.masked_fill(future, float("-inf")))
        mixed = (weights @ v).transpose(1, 2).reshape(batch, tokens, width)
        return self.project(mixed)


class FeedForward(nn.Module):
    """SwiGLU: a SiLU-activated gate multiplies an "up" projection, then "down" projects back."""

    def __init__(self, width: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(width, hidden, bias=False)
        self.up = nn.Linear(width, hidden, bias=False)
        self.silu = nn.SiLU()
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x):
        return self.down(torch.mul(self.silu(self.gate(x)), self.up(x)))


class DecoderBlock(nn.Module):
    """Pre-norm residual block: normalise, transform, and add back to the residual stream."""

    def __init__(self, width: int, heads: int, hidden: int):
        super().__init__()
        self.attention_norm = RMSNorm(width)
        self.attention = Attention(width, heads)
        self.ffn_norm = RMSNorm(width)
        self.ffn = FeedForward(width, hidden)

    def forward(self, x):
        x = torch.add(x, self.attention(self.attention_norm(x)))
        return torch.add(x, self.ffn(self.ffn_norm(x)))


class TinyLlama(nn.Module):
    """Token ids (batch, tokens) -> next-token logits (batch, tokens, vocab)."""

    def __init__(self, vocab: int = 32, width: int = 16, heads: int = 4, hidden: int = 40):
        super().__init__()
        self.embedding = nn.Embedding(vocab, width)
        self.block = DecoderBlock(width, heads, hidden)
        self.final_norm = RMSNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        return self.lm_head(self.final_norm(self.block(self.embedding(tokens))))


# -- Numerical checks: each returns {"passed", "value", "tolerance", "description"} --------

def _tokens(model, length=6, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, model.embedding.num_embeddings, (1, length), generator=generator)


def _result(value, tolerance, description):
    return {"passed": bool(value <= tolerance), "value": float(value), "tolerance": tolerance,
            "description": description}


@torch.no_grad()
def check_causal(model):
    """Changing the last token must not change the logits of any earlier position."""
    tokens = _tokens(model)
    changed = tokens.clone()
    changed[0, -1] = (tokens[0, -1] + 1) % model.embedding.num_embeddings
    difference = (model(tokens)[:, :-1] - model(changed)[:, :-1]).abs().max()
    return _result(difference.item(), 1e-6, "Later token changes leave earlier causal logits unchanged")


@torch.no_grad()
def check_zero_projection_identity(model):
    """With zero attention and FFN output projections both residual branches add nothing."""
    silent = copy.deepcopy(model)
    silent.block.attention.project.weight.zero_()
    silent.block.ffn.down.weight.zero_()
    x = torch.randn(1, 6, model.embedding.embedding_dim, generator=torch.Generator().manual_seed(1))
    difference = (silent.block(x) - x).abs().max()
    return _result(difference.item(), 0.0,
                   "Zero attention/FFN output projections make the entire pre-norm block an identity")


@torch.no_grad()
def check_rope_norm(model):
    """A rotation never changes length: each head's query/key vector keeps its norm."""
    attention = model.block.attention
    x = torch.randn(1, attention.heads, 6, attention.head_dim, generator=torch.Generator().manual_seed(2))
    worst = max((rope(x).norm(dim=-1) - x.norm(dim=-1)).abs().max().item()
                for rope in (attention.query_rope, attention.key_rope))
    return _result(worst, 1e-5, "RoPE preserves each head's query/key norm")


@torch.no_grad()
def check_prefix(model):
    """Running only the first n tokens gives the same logits as the full sequence's first n."""
    tokens = _tokens(model)
    full = model(tokens)
    worst = max((model(tokens[:, :n]) - full[:, :n]).abs().max().item()
                for n in range(1, tokens.shape[1] + 1))
    return _result(worst, 1e-5, "Prefix evaluation matches the corresponding full-sequence outputs")


CHECKS = (check_causal, check_zero_projection_identity, check_rope_norm, check_prefix)
