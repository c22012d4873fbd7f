"""Random scores divided by a temperature that comes from a local helper package."""

import numpy as np
from helpers.scaling import temperature


def scores(scale, seed):
    rng = np.random.default_rng(seed)
    print("scores seed", seed)
    return rng.standard_normal((3, 5)) * scale / temperature()
