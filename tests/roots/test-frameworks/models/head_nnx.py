"""The same head in Flax NNX (an Embed, whose embedding is PyTorch's Embedding.weight)."""

import math
import jax
from flax import nnx


class Head(nnx.Module):
    def __init__(self, rngs, vocab=8, width=8):
        self.embed = nnx.Embed(vocab, width, rngs=rngs)
        self.query = nnx.Linear(width, width, rngs=rngs)
        self.key = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids)
        scores = self.query(x) @ self.key(x).swapaxes(-2, -1) / math.sqrt(x.shape[-1])
        return jax.nn.softmax(scores, axis=-1)


def make(seed=0):
    return Head(nnx.Rngs(seed))
