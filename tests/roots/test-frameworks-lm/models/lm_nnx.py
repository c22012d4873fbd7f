"""The same language model ported to Flax NNX by hand, with the same attribute names (so the
shared weights pair by path: ``layers.0.attn.q.kernel`` is ``layers.0.attn.q.weight``, transposed)."""

import math

import jax
import jax.numpy as jnp
from flax import nnx


class Attention(nnx.Module):
    def __init__(self, width: int, heads: int, rngs: nnx.Rngs):
        self.heads = heads
        self.q, self.k, self.v = (nnx.Linear(width, width, rngs=rngs) for _ in range(3))
        self.out = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x):
        b, t, w = x.shape
        split = lambda y: y.reshape(b, t, self.heads, w // self.heads).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.swapaxes(-1, -2) / math.sqrt(w // self.heads)
        causal = jnp.tril(jnp.ones((t, t), dtype=bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
        return self.out((weights @ v).transpose(0, 2, 1, 3).reshape(b, t, w))


class MLP(nnx.Module):
    def __init__(self, width: int, rngs: nnx.Rngs):
        self.fc, self.proj = nnx.Linear(width, 4 * width, rngs=rngs), nnx.Linear(4 * width, width, rngs=rngs)

    def __call__(self, x):
        return self.proj(jax.nn.gelu(self.fc(x), approximate=False))


class Block(nnx.Module):
    def __init__(self, width: int, heads: int, rngs: nnx.Rngs):
        self.norm1, self.attn = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs), Attention(width, heads, rngs)
        self.norm2, self.mlp = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs), MLP(width, rngs)

    def __call__(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nnx.Module):
    def __init__(self, vocabulary: int, width: int, layers: int, heads: int, length: int, rngs: nnx.Rngs):
        self.embed, self.position = nnx.Embed(vocabulary, width, rngs=rngs), nnx.Embed(length, width, rngs=rngs)
        self.layers = nnx.List([Block(width, heads, rngs) for _ in range(layers)])
        self.norm = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs)
        self.unembed = nnx.Linear(width, vocabulary, use_bias=False, rngs=rngs)

    def __call__(self, ids):
        x = self.embed(ids) + self.position(jnp.arange(ids.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.unembed(self.norm(x))


def make(vocabulary: int = 12, width: int = 16, layers: int = 2, heads: int = 2, length: int = 16, seed: int = 0):
    return TinyLM(vocabulary, width, layers, heads, length, nnx.Rngs(seed))
