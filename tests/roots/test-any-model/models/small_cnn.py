"""A small CNN whose forward returns ``(logits, features)``; the file a colleague owns."""

from __future__ import annotations

import torch
from torch import nn


def squash(x: torch.Tensor) -> torch.Tensor:
    """A helper function: its ops become a group named ``squash()``."""
    centred = x - x.mean(dim=1, keepdim=True)
    return torch.tanh(centred)


class SmallCNN(nn.Module):
    def __init__(self, channels: int = 8, classes: int = 3) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, channels, kernel_size=3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(channels, classes)

    def forward(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = squash(self.conv(image))
        pooled = self.pool(features)
        mixed = features.unsqueeze(1) * features.unsqueeze(2)  # 1×8×8×6×6: no layout to infer
        return self.head(pooled.flatten(1)), {"features": features, "mixed": mixed.sum(dim=(3, 4))}
