"""A stack of blocks, compiled or not, with a layer that only runs for negative inputs."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Stack(nn.Module):
    def __init__(self, width: int = 4):
        super().__init__()
        self.layers = nn.ModuleList([Block(width), Block(width)])
        self.spare = nn.Linear(width, width)

    def forward(self, x):
        if x.sum() < 0:
            x = self.spare(x)
        for layer in self.layers:
            x = layer(x)
        return x


def compiled_stack(width: int = 4):
    """The stack as torch.compile returns it."""
    return torch.compile(Stack(width))


@torch.compile
def squash(t):
    return torch.tanh(t) * 0.5


class CallsCompiled(nn.Module):
    """An eager module that calls a compiled function after a graph break."""

    def __init__(self, width: int = 4):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        h = self.proj(x)
        print("shape", tuple(h.shape))
        return squash(h)
