"""A plain JAX function with one named scope, for the JAX checkpoint failure."""

import jax
import jax.numpy as jnp


def make(seed: int = 0):
    weight = jax.random.normal(jax.random.PRNGKey(seed), (4, 4))

    def forward(x):
        with jax.named_scope("proj"):
            return jnp.tanh(x @ weight)

    return forward
