"""Softmax attention weights at a temperature: the sweep's lesson code and its checks."""

import numpy as np


def weights(temperature: float, seed: int = 0) -> np.ndarray:
    """Softmax over fixed random scores divided by ``temperature`` (rows sum to one)."""
    scores = np.random.default_rng(seed).normal(size=(3, 4)) * 2.0
    z = scores / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def rows_sum_to_one(values: np.ndarray) -> bool:
    """Every row of the weights sums to one."""
    return bool(np.allclose(values.sum(axis=1), 1.0))


def _entropy(values: np.ndarray) -> float:
    return float(-(values * np.log(values)).sum(axis=1).mean())


def entropy_rises(points: dict) -> dict:
    """The mean row entropy rises with the temperature."""
    series = [_entropy(points[t]) for t in sorted(points)]
    return {"passed": all(b > a for a, b in zip(series, series[1:])), "value": series[-1] - series[0]}


def entropy_falls(points: dict) -> bool:
    """The mean row entropy falls with the temperature (false: this claim must fail)."""
    series = [_entropy(points[t]) for t in sorted(points)]
    return all(b < a for a, b in zip(series, series[1:]))
