from helpers.leaf import FACTOR


def scale():
    return FACTOR * 2
