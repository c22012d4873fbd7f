"""A single-head pre-LN transformer block in JAX, small enough to read in one sitting.

Shapes: 4 tokens x 8 features; the feed-forward branch goes 8 -> 16 -> 8.
"""

import jax
import jax.numpy as jnp

TOKENS, WIDTH, HIDDEN = 4, 8, 16


def layer_norm(x, gain, bias, eps=1e-5):
    """Normalise each token's features to mean 0 and variance 1, then scale and shift."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * gain + bias


def init_params(key, zero_weights=False):
    """Random projection weights and biases; ``zero_weights`` zeroes every weight matrix only."""
    keys = jax.random.split(key, 12)
    def weight(k, shape):
        w = jax.random.normal(k, shape) / jnp.sqrt(shape[0])
        return jnp.zeros(shape) if zero_weights else w
    def bias(k, size):
        return 0.1 * jax.random.normal(k, (size,))
    return {
        "ln1": (jnp.ones(WIDTH), jnp.zeros(WIDTH)),
        "q": (weight(keys[0], (WIDTH, WIDTH)), bias(keys[1], WIDTH)),
        "k": (weight(keys[2], (WIDTH, WIDTH)), bias(keys[3], WIDTH)),
        "v": (weight(keys[4], (WIDTH, WIDTH)), bias(keys[5], WIDTH)),
        "o": (weight(keys[6], (WIDTH, WIDTH)), bias(keys[7], WIDTH)),
        "ln2": (jnp.ones(WIDTH), jnp.zeros(WIDTH)),
        "up": (weight(keys[8], (WIDTH, HIDDEN)), bias(keys[9], HIDDEN)),
        "down": (weight(keys[10], (HIDDEN, WIDTH)), bias(keys[11], WIDTH)),
    }


def causal_attention(h, params):
    """One head: scores QK^T / sqrt(d), future positions masked, softmax, weighted V, projection."""
    q = h @ params["q"][0] + params["q"][1]
    k = h @ params["k"][0] + params["k"][1]
    v = h @ params["v"][0] + params["v"][1]
    scores = q @ k.T / jnp.sqrt(WIDTH)
    mask = jnp.tril(jnp.ones((TOKENS, TOKENS), dtype=bool))
    weights = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf), axis=-1)
    return (weights @ v) @ params["o"][0] + params["o"][1]


def feed_forward(h, params):
    hidden = jax.nn.gelu(h @ params["up"][0] + params["up"][1])
    return hidden @ params["down"][0] + params["down"][1]


def block(x, params):
    """Pre-LN: normalise inside each branch, add the branch back to the residual stream."""
    x = x + causal_attention(layer_norm(x, *params["ln1"]), params)
    return x + feed_forward(layer_norm(x, *params["ln2"]), params)


def zero_projection_delta(seed):
    """Output minus input of the block when every learned weight matrix is zero (biases kept)."""
    x_key, param_key = jax.random.split(jax.random.PRNGKey(seed))
    x = jax.random.normal(x_key, (TOKENS, WIDTH))
    params = init_params(param_key, zero_weights=True)
    out = block(x, params)
    print("Block shape:", out.shape)
    return out - x


def check_rows_identical(delta):
    """With zero weights every token gets the same change: rows agree to float32 rounding."""
    spread = float(abs(delta - delta[0]).max())
    return {"passed": spread < 1e-5, "value": spread, "tolerance": 1e-5,
            "description": "All four rows of output minus input are equal (within 1e-5)"}


def check_not_identity(delta):
    """The biases survive: the change is not zero, so the block is not an identity map."""
    smallest = float(abs(delta).max())
    return {"passed": smallest > 1e-3, "value": smallest, "tolerance": 1e-3,
            "description": "Output minus input is not zero (the block is not an identity)"}
