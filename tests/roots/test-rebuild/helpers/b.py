from helpers.c import BASE


def offset():
    return BASE + 0.5
