"""Two layers of Flax NNX multi-head attention over token embeddings (random weights)."""

import jax.numpy as jnp
from flax import nnx


class TinyNNX(nnx.Module):
    def __init__(self, seed: int = 0):
        rngs = nnx.Rngs(seed)
        self.embed = nnx.Embed(8, 16, rngs=rngs)
        self.layers = nnx.List([nnx.MultiHeadAttention(num_heads=2, in_features=16, decode=False, rngs=rngs)
                                for _ in range(2)])

    def __call__(self, ids):
        x = self.embed(ids)
        mask = nnx.make_causal_mask(ids)
        for layer in self.layers:
            x = x + layer(x, mask=mask)
        return jnp.mean(x)
