"""Softmax temperature: the same scores divided by a growing factor, in JAX.

Used by the scaling lesson's sweep: one executed figure per divisor, and a check across the sweep
that the weights get flatter (their entropy rises) as the divisor grows.
"""

import jax
import jax.numpy as jnp
import numpy as np

D = 64  # head dimension: the usual divisor is sqrt(D) = 8
QUERIES, KEYS = 4, 8


def weights_divided_by(key, divisor):
    """Softmax weights of four queries over eight keys, with the raw scores divided by ``divisor``."""
    kq, kk = jax.random.split(key)
    q = jax.random.normal(kq, (QUERIES, D))
    k = jax.random.normal(kk, (KEYS, D))
    return jax.nn.softmax((q @ k.T) / divisor, axis=-1)


def mean_entropy(weights):
    """Mean Shannon entropy of the rows, in nats (0: one-hot, log 8 = 2.08: uniform over 8 keys)."""
    w = np.asarray(weights, dtype=np.float64)
    return float(-(w * np.log(np.clip(w, 1e-300, None))).sum(axis=1).mean())


def check_rows_sum_to_one(weights):
    """Every row of weights sums to one."""
    return bool(np.allclose(np.asarray(weights).sum(axis=1), 1.0, atol=1e-5))


def check_entropy_rises(points):
    """The weights get flatter as the divisor grows: the mean row entropy rises at every step."""
    series = [mean_entropy(points[divisor]) for divisor in sorted(points)]
    return {"passed": all(b > a for a, b in zip(series, series[1:])), "value": series[-1] - series[0],
            "description": "The mean row entropy rises at every step as the divisor grows "
                           f"(from {series[0]:.2f} to {series[-1]:.2f} nats)"}
