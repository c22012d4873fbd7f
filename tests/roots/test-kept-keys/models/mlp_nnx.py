"""The same MLP ported to Flax NNX by hand."""

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, width: int, hidden: int, rngs: nnx.Rngs):
        self.norm = nnx.LayerNorm(width, epsilon=1e-5, rngs=rngs)
        self.fc1 = nnx.Linear(width, hidden, rngs=rngs)
        self.fc2 = nnx.Linear(hidden, width, rngs=rngs)
        self.proj = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x):
        h = jax.nn.gelu(self.fc1(self.norm(x)), approximate=False)
        return self.proj(self.fc2(h))


def make(width: int = 8, hidden: int = 16, seed: int = 0):
    return MLP(width, hidden, nnx.Rngs(seed))
