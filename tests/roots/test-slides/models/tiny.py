"""The smallest model with a module to step through and two checkpoints."""

from torch import nn


class Tiny(nn.Module):
    def __init__(self, width: int = 4) -> None:
        super().__init__()
        self.up = nn.Linear(width, 3)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.up(x))
