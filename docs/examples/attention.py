"""Causal attention weights for a handful of random tokens (the manual's tutorial figure)."""

import numpy as np


def causal_attention(tokens, width, seed):
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((tokens, width))
    keys = rng.standard_normal((tokens, width))
    scores = queries @ keys.T / np.sqrt(width)
    scores[np.triu_indices(tokens, k=1)] = -np.inf  # a token may not look ahead
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    print("scores shape:", scores.shape)
    return weights / weights.sum(axis=1, keepdims=True)


def rows_sum_to_one(values):
    """Every row of attention weights sums to one."""
    error = float(np.abs(values.sum(axis=1) - 1).max())
    return {"passed": error < 1e-9, "value": error, "tolerance": 1e-9}
