"""The same scores in Equinox, whose layers work on one vector: mapped over the tokens with vmap."""

import math

import equinox as eqx
import jax


class Scores(eqx.Module):
    norm: eqx.nn.LayerNorm
    query: eqx.nn.Linear
    key: eqx.nn.Linear

    def __init__(self, width: int, key):
        k1, k2 = jax.random.split(key)
        self.norm = eqx.nn.LayerNorm(width, eps=1e-5)
        self.query = eqx.nn.Linear(width, width, key=k1)
        self.key = eqx.nn.Linear(width, width, key=k2)

    def __call__(self, x):
        x = jax.vmap(self.norm)(x)
        scores = jax.vmap(self.query)(x) @ jax.vmap(self.key)(x).T / math.sqrt(x.shape[-1])
        return jax.nn.softmax(scores, axis=-1)


def make(width: int = 8, seed: int = 0):
    return Scores(width, jax.random.PRNGKey(seed))
