"""A tiny Equinox language model (random weights): its blocks are a list, its read-out a linear map
applied per position, so the page gives the unembedding as a function."""

import equinox as eqx
import jax


class Block(eqx.Module):
    mix: eqx.nn.Linear

    def __init__(self, key):
        self.mix = eqx.nn.Linear(12, 12, key=key)

    def __call__(self, x):
        return x + jax.nn.tanh(jax.vmap(jax.vmap(self.mix))(x))


class TinyEqx(eqx.Module):
    embed: eqx.nn.Embedding
    blocks: list
    head: eqx.nn.Linear

    def __init__(self, seed: int = 0):
        keys = jax.random.split(jax.random.PRNGKey(seed), 4)
        self.embed = eqx.nn.Embedding(8, 12, key=keys[0])
        self.blocks = [Block(keys[1]), Block(keys[2])]
        self.head = eqx.nn.Linear(12, 8, key=keys[3])

    def __call__(self, ids):
        x = jax.vmap(jax.vmap(self.embed))(ids)
        for block in self.blocks:
            x = block(x)
        return unembed(self, x)


def unembed(model, hidden):
    """The read-out of every position of every row."""
    return jax.vmap(jax.vmap(model.head))(hidden)
