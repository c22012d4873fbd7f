"""Tiny models written the way each JAX library's users write them (random weights, no downloads)."""

import equinox as eqx
import flax.linen as nn
import jax
import jax.numpy as jnp
from flax import nnx


def rms_scale(x):
    """A user function: drawn as a group named ``rms_scale``."""
    return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


class Block(nnx.Module):
    def __init__(self, width: int, rngs: nnx.Rngs):
        self.norm = nnx.LayerNorm(width, rngs=rngs)
        self.linear = nnx.Linear(width, 2 * width, rngs=rngs)
        self.out = nnx.Linear(2 * width, width, rngs=rngs)

    def __call__(self, x):
        return x + self.out(jax.nn.gelu(self.linear(self.norm(x))))


class NnxMLP(nnx.Module):
    def __init__(self, width: int, depth: int, rngs: nnx.Rngs):
        self.layers = nnx.List([Block(width, rngs) for _ in range(depth)])
        self.head = nnx.Linear(width, 3, rngs=rngs)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return jax.nn.softmax(self.head(rms_scale(x)))


def nnx_mlp(width: int = 8, depth: int = 2, seed: int = 0):
    return NnxMLP(width, depth, nnx.Rngs(seed))


def nnx_mlp_jit(width: int = 8, depth: int = 2, seed: int = 0):
    """The same model, called under jit and vmap over the batch."""
    model = NnxMLP(width, depth, nnx.Rngs(seed))
    return jax.jit(jax.vmap(model))


class CNN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 4, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(4, 4, kernel_size=(3, 3), rngs=rngs)
        self.head = nnx.Linear(4, 2, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.conv1(x))
        x = nnx.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = nnx.relu(self.conv2(x))
        return self.head(x.mean(axis=(1, 2)))


def nnx_cnn(seed: int = 0):
    return CNN(nnx.Rngs(seed))


class LinenMLP(nn.Module):
    hidden: int = 8

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.hidden)(x))
        x = nn.Dense(self.hidden)(x)
        return nn.Dense(3)(jax.nn.gelu(x))


def linen_mlp(seed: int = 0):
    model = LinenMLP()
    variables = model.init(jax.random.PRNGKey(seed), jnp.ones((1, 8)))
    return jax.jit(lambda x: model.apply(variables, x))


def linen_bound(seed: int = 0):
    """A Linen module bound to its variables is callable on its own."""
    model = LinenMLP()
    return model.bind(model.init(jax.random.PRNGKey(seed), jnp.ones((1, 8))))


class EqxMLP(eqx.Module):
    norm: eqx.nn.LayerNorm
    mlp: eqx.nn.MLP

    def __init__(self, key):
        self.norm = eqx.nn.LayerNorm(8)
        self.mlp = eqx.nn.MLP(8, 3, 16, depth=2, key=key)

    def __call__(self, x):
        return self.mlp(self.norm(x))


def eqx_mlp(seed: int = 0):
    return eqx.filter_jit(eqx.filter_vmap(EqxMLP(jax.random.PRNGKey(seed))))


class EqxBlock(eqx.Module):
    linear: eqx.nn.Linear

    def __init__(self, key):
        self.linear = eqx.nn.Linear(8, 8, key=key)

    def __call__(self, x):
        return x + jnp.tanh(self.linear(x))


class EqxStack(eqx.Module):
    layers: EqxBlock

    def __init__(self, depth: int, key):
        self.layers = eqx.filter_vmap(EqxBlock)(jax.random.split(key, depth))

    def __call__(self, x):
        params, static = eqx.partition(self.layers, eqx.is_array)

        def step(h, layer_params):
            return eqx.combine(layer_params, static)(h), None

        return jax.lax.scan(step, x, params)[0]


def eqx_scan(depth: int = 3, seed: int = 0):
    return EqxStack(depth, jax.random.PRNGKey(seed))


@nnx.jit
def nnx_forward(model, x):
    """The usual NNX training-loop style: the model is an argument of an nnx.jit function."""
    return model(x)


def nnx_jit_argument(seed: int = 0):
    model = NnxMLP(8, 2, nnx.Rngs(seed))
    return lambda x: nnx_forward(model, x)


class NnxAttention(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.attention = nnx.MultiHeadAttention(num_heads=2, in_features=8, decode=False, rngs=rngs)

    def __call__(self, x):
        return self.attention(x)


def nnx_attention(seed: int = 0):
    return NnxAttention(nnx.Rngs(seed))


class NnxScores(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.query = nnx.Linear(8, 8, rngs=rngs)

    def scores(self, x):
        q = self.query(x)
        return jax.nn.softmax(q @ x.T)

    def __call__(self, x):
        return self.scores(x) @ x


def nnx_attention_method(seed: int = 0):
    return NnxScores(nnx.Rngs(seed))


class LinenBlock(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        return x + nn.Dense(8)(nn.LayerNorm()(x)), None


class LinenStack(nn.Module):
    @nn.compact
    def __call__(self, x):
        stack = nn.scan(LinenBlock, variable_axes={"params": 0}, split_rngs={"params": True}, length=3)
        return stack(name="blocks")(x, None)[0]


def linen_scan(seed: int = 0):
    model = LinenStack()
    variables = model.init(jax.random.PRNGKey(seed), jnp.ones((1, 8)))
    return lambda x: model.apply(variables, x)


class EqxAttention(eqx.Module):
    attention: eqx.nn.MultiheadAttention

    def __init__(self, key):
        self.attention = eqx.nn.MultiheadAttention(2, 8, key=key)

    def __call__(self, x):
        return self.attention(x, x, x)


def eqx_attention(seed: int = 0):
    return EqxAttention(jax.random.PRNGKey(seed))


def check_probabilities(model):
    """The NNX MLP's outputs are probabilities."""
    out = model(jnp.ones((2, 8)))
    return {"passed": bool(jnp.allclose(out.sum(-1), 1.0, atol=1e-5)), "value": float(out.sum(-1)[0]),
            "tolerance": 1e-5}
