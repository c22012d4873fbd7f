"""The ``tensorviz`` command: look after a project's artifact store from the terminal.

``tensorviz status|execute|verify|gc|show [SOURCEDIR]`` and ``tensorviz push|pull``; each subcommand lives in its own
module with an ``add_parser(subparsers)`` function and a ``run(args) -> int``.
Exit status: 0 success, 1 a check failed (something not cached, a failed execution,
a verification mismatch), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..features import declare_builtin_kinds
from . import execute, gc, pull, push, show, status, verify
from .project import CliError

SUBCOMMANDS = (status, execute, verify, gc, show, push, pull)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorviz",
        description="Inspect, execute and verify the tensorviz artifacts of a Sphinx project.",
        epilog="Exit status: 0 ok, 1 a check failed or values differ, 2 usage error. "
               "Run 'tensorviz COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    declare_builtin_kinds()  # commands that open no project (push, pull) still read artifacts of every kind
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"tensorviz {args.command}: error: {exc}", file=sys.stderr)
        return exc.code
    except OSError as exc:  # e.g. a remote store that cannot be reached or written
        print(f"tensorviz {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tensorviz: interrupted", file=sys.stderr)
        return 130
