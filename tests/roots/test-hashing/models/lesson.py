import numpy as np
from helpers.mid import scale


def values():
    return np.eye(2) * scale()
