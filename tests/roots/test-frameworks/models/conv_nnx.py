"""The same network in Flax NNX, which convolves NHWC: the image is moved into that layout first."""

import jax
import jax.numpy as jnp
from flax import nnx


class ConvNet(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.conv = nnx.Conv(3, 4, kernel_size=(3, 3), padding=1, rngs=rngs)
        self.head = nnx.Linear(4, 4, rngs=rngs)

    def __call__(self, x):
        x = jnp.transpose(x, (0, 2, 3, 1))  # NCHW -> NHWC
        features = jax.nn.relu(self.conv(x)).mean(axis=(1, 2))
        return self.head(features)


def make(seed: int = 0):
    return ConvNet(nnx.Rngs(seed))
