"""One attention map whose sharpness is a parameter the training sets to step / 10 (a known value per
snapshot), over embeddings the training learns with SGD."""

import math

import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self, vocabulary):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, 4)
        self.scale = nn.Parameter(torch.zeros(()))
        self.out = nn.Linear(4, vocabulary)

    def forward(self, ids):
        length = ids.shape[-1]
        previous = torch.zeros(1, length, length)
        for query in range(1, length):
            previous[0, query, query - 1] = 1.0
        future = torch.ones(length, length, dtype=torch.bool).triu(1)
        weights = torch.softmax((self.scale * previous).masked_fill(future, float("-inf")), dim=-1)
        return self.out(weights @ self.embed(ids)[0])


def make_model(vocabulary=8, seed=0):
    torch.manual_seed(seed)
    return Tiny(vocabulary)


def attention_untrained(weights):
    """Without a training's weights the scale is 0: the second token splits its weight evenly."""
    return abs(float(weights[0][1][0]) - 0.5) < 1e-4


def scale_is_two(model):
    """The graph's model has the last snapshot's weights (scale 2.0, set at step 20)."""
    return abs(float(model.scale) - 2.0) < 1e-6


def attention_at_scale_one(weights):
    """The second token puts e / (e + 1) of its weight on the first: the scale of step 10 is loaded."""
    return abs(float(weights[0][1][0]) - math.e / (math.e + 1)) < 1e-4
