"""The heatmap's products in PyTorch and in JAX, for ``:frameworks: torch, jax`` (the same numbers)."""


def scaled_torch(scale=1.0, seed=0):
    import torch

    return torch.outer(torch.arange(1.0, 3.0), torch.arange(1.0, 4.0)) * scale


def scaled_jax(scale=1.0, seed=0):
    import jax.numpy as jnp

    return jnp.outer(jnp.arange(1.0, 3.0), jnp.arange(1.0, 4.0)) * scale


def doubled_torch(scale=1.0, seed=0):
    return scaled_torch(scale) * 2


def scaled_jax_by_rows(scale=1.0, seed=0):
    """``scaled_jax`` written another way: another file text is not needed, another function is."""
    import jax.numpy as jnp

    return jnp.arange(1.0, 3.0)[:, None] * jnp.arange(1.0, 4.0)[None, :] * scale
