"""A layer-normed MLP with GELU, as a PyTorch course writes it."""

from torch import nn


class MLP(nn.Module):
    def __init__(self, width: int = 8, hidden: int = 16):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return self.proj(self.fc2(self.act(self.fc1(self.norm(x)))))


def make(width: int = 8, hidden: int = 16):
    return MLP(width, hidden)
