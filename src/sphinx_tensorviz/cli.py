"""The ``tensorviz`` command (see ``tensorviz --help``)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tensorviz", description="Inspect and execute tensorviz artifacts.")
    parser.parse_args(argv)
    return 0
