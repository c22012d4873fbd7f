"""A linear model trained for a few steps, with a second factory, loop and check to vary."""

import torch
from torch import nn


def make_model(width: int = 4, seed: int = 0):
    torch.manual_seed(seed)
    return nn.Linear(width, 1)


def make_wider(width: int = 4, seed: int = 0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(width, 8), nn.Linear(8, 1))


def train(model, *, steps, seed, log, lr=0.1):
    generator = torch.Generator().manual_seed(seed)
    width = next(model.parameters()).shape[-1]
    x = torch.randn(32, width, generator=generator)
    y = x.sum(-1, keepdim=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(1, steps + 1):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.step(step, loss=float(loss))


def train_faster(model, *, steps, seed, log):
    train(model, steps=steps, seed=seed, log=log, lr=0.2)


def loss_falls(curves):
    """The loss ends lower than it starts."""
    points = curves["loss"]
    return points[-1][1] < points[0][1]
