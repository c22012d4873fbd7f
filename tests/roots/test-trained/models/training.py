"""The training loop of ``models/tiny.py``'s model: SGD on the embeddings and the output layer, and
the attention's scale set to step / 10 after each step (a known value in every snapshot)."""

import torch
from torch import nn


def train(model, *, steps, seed, log):
    ids = torch.tensor([[1, 2, 3, 4, 5, 6]])
    target = torch.tensor([2, 3, 4, 5, 6, 7])
    optimiser = torch.optim.SGD([model.embed.weight, *model.out.parameters()], lr=0.5)
    for step in range(1, steps + 1):
        optimiser.zero_grad()
        loss = nn.functional.cross_entropy(model(ids)[0], target)
        loss.backward()
        optimiser.step()
        with torch.no_grad():
            model.scale.fill_(step / 10)
        log.step(step, loss=loss.item())
