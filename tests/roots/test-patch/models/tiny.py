"""A transformer small enough to patch by hand: causal multi-head attention blocks (and, if asked, an
MLP), written as a course writes one. ``layers=1, heads=1`` is the model of the hand computation."""

import torch
from torch import nn

VOCABULARY, WIDTH, LENGTH = 12, 16, 16


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


class Tiny(nn.Module):
    def __init__(self, layers, heads, mlp):
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, WIDTH)
        self.position = nn.Embedding(LENGTH, WIDTH)
        self.blocks = nn.ModuleList(Block(heads, mlp) for _ in range(layers))
        self.unembed = nn.Linear(WIDTH, VOCABULARY)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.unembed(x)


def make_model(layers=1, heads=1, mlp=False, seed=0):
    torch.manual_seed(seed)
    return Tiny(layers, heads, mlp).eval()


def letters(ids):
    return ["ABCDEFGHIJKL"[n] for n in ids]


def last_logit_gap(logits):
    """Token 3's logit minus token 7's at the last position, written by hand (the built-in's twin)."""
    return logits[-1, 3] - logits[-1, 7]


def one_head_restores_everything(effects):
    """Patching the only head restores all of the logit difference."""
    return {"passed": abs(float(effects[0][0]) - 1) < 1e-4, "value": float(effects[0][0]),
            "description": "Patching head 0.0 restores 100% of the logit difference"}
