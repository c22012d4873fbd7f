"""Training an Equinox model: each step makes a new model, given to log.step and returned."""

import equinox as eqx
import jax
import jax.numpy as jnp


def data(seed: int = 0):
    x = jax.random.normal(jax.random.PRNGKey(seed + 100), (64, 3))
    return x, x @ jnp.array([1.5, -2.0, 0.5]) + 0.3


def loss_of(model, seed: int = 0):
    x, y = data(seed)
    return jnp.mean((jax.vmap(model)(x)[:, 0] - y) ** 2)


def train(model, *, steps, seed, log):
    grad = eqx.filter_value_and_grad(loss_of)
    for step in range(1, steps + 1):
        loss, grads = grad(model, seed)
        model = eqx.apply_updates(model, jax.tree.map(lambda g: -0.1 * g, grads))
        log.step(step, loss=loss, model=model)
    return model
