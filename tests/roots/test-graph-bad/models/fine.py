"""Small well-behaved and badly-behaved models for the failure pages."""

import torch
from torch import nn


class Fine(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Raises(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        h = self.proj(x)
        raise RuntimeError("forward exploded on purpose")


def check_true(model):
    """A claim that holds."""
    return True


def check_false(model):
    """A claim that does not hold: the output is all zeros."""
    return False
