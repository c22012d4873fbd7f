"""A Flax NNX linear regression, trained in place with plain SGD."""

import jax
import jax.numpy as jnp
from flax import nnx


def make_model(seed: int = 0) -> nnx.Linear:
    return nnx.Linear(3, 1, rngs=nnx.Rngs(seed))


def data(seed: int = 0):
    x = jax.random.normal(jax.random.PRNGKey(seed + 100), (64, 3))
    return x, x @ jnp.array([[1.5], [-2.0], [0.5]]) + 0.3


def loss_of(model, seed: int = 0) -> float:
    x, y = data(seed)
    return float(jnp.mean((model(x) - y) ** 2))


def train(model, *, steps, seed, log):
    x, y = data(seed)

    def loss_fn(m):
        return jnp.mean((m(x) - y) ** 2)

    for step in range(1, steps + 1):
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        params = nnx.state(model, nnx.Param)
        nnx.update(model, jax.tree.map(lambda p, g: p - 0.1 * g, params, grads))
        log.step(step, loss=loss)
