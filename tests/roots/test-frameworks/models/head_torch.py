"""One attention head (embedding, query, key, scaled softmax) in PyTorch, for tv-attention."""

import math
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, vocab=8, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)

    def forward(self, ids):
        x = self.embed(ids)
        scores = self.query(x) @ self.key(x).transpose(-2, -1) / math.sqrt(x.shape[-1])
        return torch.softmax(scores, dim=-1)


def make():
    return Head()
