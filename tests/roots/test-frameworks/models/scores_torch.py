"""Attention scores of one head after a layer norm, in PyTorch."""

import math

import torch
from torch import nn


class Scores(nn.Module):
    def __init__(self, width: int = 8):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)

    def forward(self, x):
        x = self.norm(x)
        scores = self.query(x) @ self.key(x).T / math.sqrt(x.shape[-1])
        return torch.softmax(scores, dim=-1)


def make(width: int = 8):
    return Scores(width)
