def factor():
    return 2.0
