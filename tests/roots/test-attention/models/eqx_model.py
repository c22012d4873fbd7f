"""Equinox's multi-head attention, which maps its attention over the heads with ``jax.vmap``."""

import equinox as eqx
import jax
import jax.numpy as jnp


class TinyEquinox(eqx.Module):
    embed: eqx.nn.Embedding
    attention: eqx.nn.MultiheadAttention

    def __init__(self, seed: int = 0):
        embed_key, attention_key = jax.random.split(jax.random.PRNGKey(seed))
        self.embed = eqx.nn.Embedding(8, 16, key=embed_key)
        self.attention = eqx.nn.MultiheadAttention(num_heads=2, query_size=16, key=attention_key)

    def __call__(self, ids):
        x = jax.vmap(self.embed)(ids[0])
        causal = jnp.tril(jnp.ones((x.shape[0], x.shape[0]), dtype=bool))
        return self.attention(x, x, x, mask=causal)
