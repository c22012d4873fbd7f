"""Imports a helper that itself imports another helper."""

import numpy as np
from helpers.b import offset


def shifted(seed):
    return np.eye(3) + offset()
