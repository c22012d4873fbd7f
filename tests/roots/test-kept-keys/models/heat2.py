"""Another copy of the heatmap's code, its second function and its checks."""

import numpy as np


def scaled(scale=1.0, seed=0):
    return np.outer(np.arange(1.0, 3.0), np.arange(1.0, 4.0)) * scale


def doubled(scale=1.0, seed=0):
    return scaled(scale) * 2


def positive(values):
    return bool((values > 0).all())


def grows(points):
    """The largest product grows with the scale."""
    series = [points[s].max() for s in sorted(points)]
    return all(b > a for a, b in zip(series, series[1:]))
