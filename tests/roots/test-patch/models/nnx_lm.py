"""A Flax NNX causal language model that names its pieces: ``blocks.{i}`` (the residual stream after
each block), ``blocks.{i}.attn``, ``blocks.{i}.mlp`` and ``blocks.{i}.attn.out`` (the attention's
output projection, whose input holds the heads: ``[batch, positions, heads, head width]``)."""

import jax.numpy as jnp
from flax import nnx

VOCABULARY, WIDTH, LENGTH = 12, 16, 16


class Block(nnx.Module):
    def __init__(self, heads, rngs):
        self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=WIDTH, decode=False, rngs=rngs)
        self.mlp = nnx.Sequential(nnx.Linear(WIDTH, 2 * WIDTH, rngs=rngs), nnx.gelu,
                                  nnx.Linear(2 * WIDTH, WIDTH, rngs=rngs))

    def __call__(self, x, mask):
        x = x + self.attn(x, mask=mask)
        return x + self.mlp(x)


class TinyLM(nnx.Module):
    def __init__(self, layers=2, heads=2, seed=0):
        rngs = nnx.Rngs(seed)
        self.embed = nnx.Embed(VOCABULARY, WIDTH, rngs=rngs)
        self.position = nnx.Embed(LENGTH, WIDTH, rngs=rngs)
        self.blocks = nnx.List([Block(heads, rngs) for _ in range(layers)])
        self.unembed = nnx.Linear(WIDTH, VOCABULARY, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids) + self.position(jnp.arange(ids.shape[1]))
        mask = nnx.make_causal_mask(ids)
        for block in self.blocks:
            x = block(x, mask)
        return self.unembed(x)
