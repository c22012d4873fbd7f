"""The KV cache as the sequence grows: the lesson's sweep of the sequence length, in PyTorch.

The inputs are drawn once for the longest sequence and cut to each length, so every length sees
the same first tokens; the check across the sweep then verifies that a longer sequence leaves the
attention of the earlier steps exactly as it was (the prefix property the cache relies on).
"""

import numpy as np
import torch

from attention import CachedAttention

MAX_TOKENS = 12


@torch.no_grad()
def cached_weights_at(seed, tokens):
    """Head 0's weights at each decoding step for a ``tokens``-long sequence, padded with zeros."""
    torch.manual_seed(seed)
    attention = CachedAttention()
    x = torch.randn(1, MAX_TOKENS, 16)[:, :tokens]
    cache, rows = {}, []
    for t in range(tokens):
        _, weights = attention.step(x[:, t : t + 1], cache)
        row = torch.zeros(tokens)
        row[: t + 1] = weights[0, 0, 0]
        rows.append(row)
    return torch.stack(rows)


def check_lower_triangle(weights):
    """Each step attends only to the cached positions (a lower triangle), and each row sums to one."""
    w = np.asarray(weights)
    return bool(np.allclose(np.triu(w, 1), 0.0) and np.allclose(w.sum(axis=1), 1.0, atol=1e-5))


def check_earlier_steps_unchanged(points):
    """A longer sequence leaves the earlier steps' attention unchanged (within float32 rounding)."""
    lengths = sorted(points)
    worst = max(float(np.abs(points[long][:short, :short] - points[short]).max())
                for short, long in zip(lengths, lengths[1:]))
    return {"passed": worst <= 1e-6, "value": worst, "tolerance": 1e-6}
