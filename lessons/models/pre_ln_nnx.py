"""The pre-LN block of ``pre_ln_torch.py`` ported to Flax NNX by hand.

What a port must get right, and what the lesson's check would catch: NNX's ``Linear`` keeps its
kernel in x out (PyTorch's weight is out x in), its ``LayerNorm`` calls the gain ``scale`` and
defaults to eps = 1e-6 (PyTorch: 1e-5), and ``jax.nn.gelu`` is the tanh approximation unless told
``approximate=False`` (PyTorch's ``gelu`` is the exact one).
"""

import math

import jax
import jax.numpy as jnp
from flax import nnx


class PreLNBlock(nnx.Module):
    def __init__(self, width: int, hidden: int, rngs: nnx.Rngs):
        self.ln1 = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs)
        self.q, self.k, self.v, self.o = (nnx.Linear(width, width, rngs=rngs) for _ in range(4))
        self.ln2 = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs)
        self.up = nnx.Linear(width, hidden, rngs=rngs)
        self.down = nnx.Linear(hidden, width, rngs=rngs)

    def attention(self, h):
        scores = self.q(h) @ self.k(h).T / math.sqrt(h.shape[-1])
        causal = jnp.tril(jnp.ones((h.shape[0], h.shape[0]), dtype=bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
        return self.o(weights @ self.v(h))

    def __call__(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.down(jax.nn.gelu(self.up(self.ln2(x)), approximate=False))


def make(width: int = 8, hidden: int = 16, seed: int = 0):
    return PreLNBlock(width, hidden, nnx.Rngs(seed))


def check_causal(block):
    """Changing the last token leaves the outputs of every earlier token unchanged."""
    x = jax.random.normal(jax.random.PRNGKey(1), (4, 8))
    changed = x.at[-1].set(10.0)
    difference = float(jnp.abs(block(x)[:-1] - block(changed)[:-1]).max())
    return {"passed": difference < 1e-5, "value": difference, "tolerance": 1e-5}
