import numpy as np


def compute():
    return np.eye(2)
