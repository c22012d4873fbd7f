"""Two ways to tell attention where tokens are, in JAX: added sinusoids and rotary rotations."""

import jax
import jax.numpy as jnp

LENGTH, WIDTH = 8, 16


def frequencies(width=WIDTH, base=10000.0):
    return base ** (-jnp.arange(0, width, 2) / width)


def sinusoidal(length=LENGTH, width=WIDTH):
    """The original transformer's encodings: sin and cos of position times each frequency."""
    angles = jnp.arange(length)[:, None] * frequencies(width)[None, :]
    return jnp.concatenate([jnp.sin(angles), jnp.cos(angles)], axis=-1)


def rotate(x, positions):
    """Rotary embedding: rotate each feature pair of x by position times its frequency."""
    angles = positions[:, None] * frequencies(x.shape[-1])[None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    return jnp.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1).reshape(x.shape)


def _same_content(key):
    """One query vector and one key vector, repeated at every position (content never changes)."""
    kq, kk = jax.random.split(key)
    q = jnp.tile(jax.random.normal(kq, (WIDTH,)), (LENGTH, 1))
    k = jnp.tile(jax.random.normal(kk, (WIDTH,)), (LENGTH, 1))
    return q, k


def sinusoidal_scores(key):
    """Scores (q + p_m) . (k + p_n) with sinusoids added: rows m are queries, columns n keys."""
    q, k = _same_content(key)
    p = sinusoidal()
    return (q + p) @ (k + p).T


def rotary_scores(key):
    """Scores rot(q, m) . rot(k, n): the same content, positions entering as rotations."""
    q, k = _same_content(key)
    positions = jnp.arange(LENGTH, dtype=jnp.float32)
    return rotate(q, positions) @ rotate(k, positions).T


def check_rotary_depends_on_offset(scores):
    """Rotary scores depend only on m - n: every diagonal of the matrix is constant."""
    worst = max(float(jnp.ptp(jnp.diagonal(scores, offset=o))) for o in range(-LENGTH + 1, LENGTH))
    return {"passed": worst < 1e-4, "value": worst, "tolerance": 1e-4,
            "description": "Rotary attention scores depend only on the offset m - n"}


def check_sinusoidal_is_not_relative(scores):
    """Added sinusoids mix content and position: the diagonals are not constant."""
    spread = max(float(jnp.ptp(jnp.diagonal(scores, offset=o))) for o in range(-LENGTH + 2, LENGTH - 1))
    return {"passed": spread > 1e-2, "value": spread, "tolerance": 1e-2,
            "description": "Added sinusoidal scores are not a function of the offset alone"}
