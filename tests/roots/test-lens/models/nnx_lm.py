"""A tiny Flax NNX language model (random weights) whose pieces the page names: ``layers.{i}``,
``norm`` and ``head``."""

import jax.numpy as jnp
from flax import nnx


class Block(nnx.Module):
    def __init__(self, width, rngs):
        self.attention = nnx.MultiHeadAttention(num_heads=2, in_features=width, decode=False, rngs=rngs)
        self.mlp = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x, mask):
        x = x + self.attention(x, mask=mask)
        return x + nnx.gelu(self.mlp(x))


class TinyLM(nnx.Module):
    def __init__(self, seed: int = 0):
        rngs = nnx.Rngs(seed)
        self.embed = nnx.Embed(8, 16, rngs=rngs)
        self.layers = nnx.List([Block(16, rngs) for _ in range(2)])
        self.norm = nnx.RMSNorm(16, rngs=rngs)
        self.head = nnx.Linear(16, 8, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids)
        mask = nnx.make_causal_mask(ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.norm(x))
