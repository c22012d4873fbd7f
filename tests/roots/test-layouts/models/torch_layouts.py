"""PyTorch models whose activations are channels x length, or attention weights."""

import torch
import torch.nn.functional as F
from torch import nn


class Conv1dNet(nn.Module):
    """Conv1d + BatchNorm1d, a ReLU module, then a depthwise F.conv1d cut to length (as Mamba does)."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Conv1d(3, 7, 3, padding=1), nn.BatchNorm1d(7))
        self.act = nn.ReLU()
        self.kernel = nn.Parameter(torch.randn(7, 1, 4))

    def forward(self, x):
        h = self.act(self.block(x))
        h = F.conv1d(h, self.kernel, padding=3, groups=7)[..., : x.shape[-1]]
        return F.relu(h)


class Attention(nn.Module):
    """Multi-head weights [B, H, T, T], and one head's [B, T, T] (its first axis is the batch)."""

    def __init__(self, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.qk = nn.Linear(8, 16)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        b, t, _ = x.shape
        q4 = q.view(b, t, self.heads, -1).transpose(1, 2)
        k4 = k.view(b, t, self.heads, -1).transpose(1, 2)
        weights = torch.softmax(q4 @ k4.transpose(-1, -2), dim=-1)
        single = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return weights @ q4, single


class Spectrum(nn.Module):
    """A complex activation: the spectrum of each token's features."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        return torch.fft.fft(self.proj(x)).abs()


class RawAndHidden(nn.Module):
    """A raw 3-axis input scaled (nothing says whether it is tokens or channels x length) beside
    the token features a linear, a GELU and a layer norm make."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        raw = x * 2
        return raw.sum() + self.norm(F.gelu(self.proj(x))).sum()
