"""Why attention divides scores by sqrt(d): in JAX, with random unit-variance queries and keys."""

import jax
import jax.numpy as jnp

DIMS = (4, 16, 64, 256, 1024)
KEYS = 8


def _weights(key, scaled):
    """One query's softmax weights over eight keys, for each head dimension in DIMS (rows)."""
    rows = []
    for d, k in zip(DIMS, jax.random.split(key, len(DIMS))):
        kq, kk = jax.random.split(k)
        q = jax.random.normal(kq, (d,))
        keys = jax.random.normal(kk, (KEYS, d))
        scores = keys @ q
        if scaled:
            scores = scores / jnp.sqrt(d)
        rows.append(jax.nn.softmax(scores))
    return jnp.stack(rows)


def unscaled_weights(key):
    return _weights(key, scaled=False)


def scaled_weights(key):
    return _weights(key, scaled=True)


def score_variances(key, samples=4000):
    """Empirical variance of q.k (unscaled, scaled) for each d, from many random pairs."""
    out = []
    for d, k in zip(DIMS, jax.random.split(key, len(DIMS))):
        kq, kk = jax.random.split(k)
        q = jax.random.normal(kq, (samples, d))
        keys = jax.random.normal(kk, (samples, d))
        dots = (q * keys).sum(axis=1)
        out.append((float(dots.var()), float((dots / jnp.sqrt(d)).var())))
    return out


def check_scaled_variance_is_one(weights):
    """Dividing by sqrt(d) keeps the score variance near 1 for every d (here within 10%)."""
    worst = max(abs(scaled - 1.0) for _, scaled in score_variances(jax.random.PRNGKey(1)))
    return {"passed": worst < 0.1, "value": worst, "tolerance": 0.1,
            "description": "Scaled scores have variance 1 (within 10%) for every head dimension"}


def check_unscaled_variance_grows(weights):
    """Without the scaling the variance is about d: relative error below 10% for every d."""
    worst = max(abs(raw / d - 1.0) for d, (raw, _) in zip(DIMS, score_variances(jax.random.PRNGKey(1))))
    return {"passed": worst < 0.1, "value": worst, "tolerance": 0.1,
            "description": "Unscaled score variance grows like the head dimension d"}
