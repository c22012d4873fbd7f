"""A model small enough to trace in a second, with a second class, arguments and checks to vary."""

import torch
from torch import nn


def squash(t):
    """A function group, for :collapse: and :hide:."""
    return torch.tanh(t) * 2


class Tiny(nn.Module):
    def __init__(self, width: int = 4, bias: bool = True) -> None:
        super().__init__()
        self.up = nn.Linear(width, 3, bias=bias)
        self.act = nn.ReLU()

    def forward(self, x, scale: float = 1.0):
        return self.act(squash(self.up(x)) * scale)


class Wider(Tiny):
    def __init__(self, width: int = 4, bias: bool = True) -> None:
        super().__init__(width, bias)
        self.up = nn.Linear(width, 5, bias=bias)


def check_nonnegative(model):
    """ReLU outputs are never negative."""
    out = model(torch.ones(1, 2, 4))
    return bool((out >= 0).all())
