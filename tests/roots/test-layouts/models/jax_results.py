"""JAX functions whose results are pytrees, and an Equinox attention layer."""

import equinox as eqx
import jax
import jax.numpy as jnp


def pair():
    return lambda x: (x.sum(), x * 2)


def running_sum():
    def forward(xs):
        return jax.lax.scan(lambda carry, row: (carry + row, carry * row), jnp.zeros(xs.shape[1]), xs)

    return forward


def losses():
    return lambda x: {"logits": jnp.tanh(x), "aux": {"loss": jnp.mean(x * x)}}


class Attention(eqx.Module):
    att: eqx.nn.MultiheadAttention

    def __init__(self, key):
        self.att = eqx.nn.MultiheadAttention(4, 8, key=key)

    def __call__(self, x):
        return self.att(x, x, x)


def eqx_attention(seed: int = 0):
    return Attention(jax.random.PRNGKey(seed))


def raw_and_dense(seed: int = 0):
    """A raw 3-axis input scaled (tokens or channels x length: nothing says) beside a dense layer."""
    weight = jax.random.normal(jax.random.PRNGKey(seed), (8, 8))
    return lambda x: (x * 2.0).sum() + jnp.tanh(x @ weight).sum()
