"""Runs that test the limits: one diverges, one logs a million steps."""

import math

import torch


def make_model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Linear(3, 1)


def train_too_fast(model, *, steps, seed, log):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(32, 3, generator=generator) * 10
    y = x.sum(dim=1, keepdim=True)
    optimiser = torch.optim.SGD(model.parameters(), lr=5.0)
    for step in range(1, steps + 1):
        optimiser.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimiser.step()
        log.step(step, loss=loss.item())


def log_a_million(model, *, steps, seed, log):
    for step in range(1, steps + 1):
        log.step(step, loss=1.0 / math.sqrt(step) + 0.01 * math.sin(step / 1000))


def train_forever(model, *, steps, seed, log):
    import time

    for step in range(1, steps + 1):
        time.sleep(0.01)
        log.step(step, loss=1.0 / step)
