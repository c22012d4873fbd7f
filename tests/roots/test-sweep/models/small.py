"""A tiny PyTorch model whose width is swept by tests/roots/test-sweep/graph.md."""

import torch
from torch import nn


class Small(nn.Module):
    def __init__(self, width=6, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.up = nn.Linear(6, width)
        self.act = nn.ReLU()
        self.down = nn.Linear(width, 6)

    def forward(self, x):
        return self.down(self.act(self.up(x)))
