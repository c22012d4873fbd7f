from helpers.consts import BASE


def temperature():
    return BASE * 2
