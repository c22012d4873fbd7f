import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x / x.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt() * self.gain


class Small(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.norm = Norm(width)
        self.up = nn.Linear(width, width)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.up(self.norm(x)))


def check_output_nonnegative(model):
    """ReLU outputs are never negative."""
    out = model(torch.randn(1, 3, 6, generator=torch.Generator().manual_seed(1)))
    return {"passed": bool((out >= 0).all()), "value": float(out.min()), "description": "ReLU outputs are never negative"}
