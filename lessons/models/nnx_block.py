"""A pre-LayerNorm transformer block written with Flax NNX (random weights, tiny sizes).

The graph shows NNX's own module paths (``attention.query``, ``mlp.up``), its parameters by
name (``attention.query.kernel``) and the functions the block calls (``causal_attention``,
``jax.nn.softmax``, ``jax.nn.gelu``) as groups.
"""

import jax
import jax.numpy as jnp
from flax import nnx


def causal_attention(q, k, v):
    """Scaled dot-product attention where each token sees itself and earlier tokens only."""
    scores = q @ k.T / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones((q.shape[0], q.shape[0]), dtype=bool))
    weights = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=-1)
    return weights @ v


class Attention(nnx.Module):
    def __init__(self, width: int, rngs: nnx.Rngs):
        self.query = nnx.Linear(width, width, rngs=rngs)
        self.key = nnx.Linear(width, width, rngs=rngs)
        self.value = nnx.Linear(width, width, rngs=rngs)
        self.out = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x):
        return self.out(causal_attention(self.query(x), self.key(x), self.value(x)))


class MLP(nnx.Module):
    def __init__(self, width: int, hidden: int, rngs: nnx.Rngs):
        self.up = nnx.Linear(width, hidden, rngs=rngs)
        self.down = nnx.Linear(hidden, width, rngs=rngs)

    def __call__(self, x):
        return self.down(jax.nn.gelu(self.up(x)))


class Block(nnx.Module):
    def __init__(self, width: int = 16, hidden: int = 32, seed: int = 0):
        rngs = nnx.Rngs(seed)
        self.attention_norm = nnx.LayerNorm(width, rngs=rngs)
        self.attention = Attention(width, rngs)
        self.mlp_norm = nnx.LayerNorm(width, rngs=rngs)
        self.mlp = MLP(width, hidden, rngs)

    def __call__(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.mlp(self.mlp_norm(x))


def check_causal(block):
    """Changing the last token leaves the outputs of every earlier token unchanged."""
    x = jax.random.normal(jax.random.PRNGKey(1), (6, 16))
    changed = x.at[-1].set(10.0)
    difference = float(jnp.abs(block(x)[:-1] - block(changed)[:-1]).max())
    return {"passed": difference < 1e-5, "value": difference, "tolerance": 1e-5}


def check_layer_norm(block):
    """Right after a LayerNorm (gain 1, bias 0 at initialisation) each token has mean 0 and variance 1."""
    x = jax.random.normal(jax.random.PRNGKey(2), (6, 16)) * 3.0 + 1.0
    normed = block.attention_norm(x)
    error = float(jnp.maximum(jnp.abs(normed.mean(-1)).max(), jnp.abs(normed.var(-1) - 1.0).max()))
    return {"passed": error < 1e-3, "value": error, "tolerance": 1e-3}
