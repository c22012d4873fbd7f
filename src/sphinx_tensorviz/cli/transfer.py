"""What ``tensorviz push FOLDER STORE`` and ``tensorviz pull STORE FOLDER`` share: copy artifacts to or
from a remote store (an fsspec URL such as ``s3://bucket/course``), validating each one on the way."""

from __future__ import annotations

import argparse
import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from ..store.remote import open_store
from ..store.sync import copy_store
from .project import CliError, open_project


def add_transfer_parser(subparsers: Any, name: str, source: str, target: str, text: str) -> None:
    """The ``push`` or ``pull`` subcommand: ``tensorviz NAME SOURCE TARGET [--failures]``."""
    parser = subparsers.add_parser(
        name, help=text,
        description=f"{text[0].upper()}{text[1:]}. Each artifact is validated before it is copied; those the "
                    "target already has are skipped. Credentials and endpoints come from the environment "
                    "(e.g. AWS_PROFILE, AWS_ENDPOINT_URL), as for fsspec.",
    )
    parser.add_argument("source", metavar=source, help="where the artifacts are")
    parser.add_argument("target", metavar=target, help="where they are copied to")
    parser.add_argument("--failures", action="store_true",
                        help="copy failure records too (for figures the target has no artifact of)")
    parser.add_argument("-c", "--conf-dir", metavar="DIR",
                        help="the folder of the course's conf.py: the extensions it loads are set up first, so "
                             "the artifacts of the figure kinds they declare are validated and copied too")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with _course_kinds(args.conf_dir):
        try:
            source, target = open_store(args.source), open_store(args.target)
            report = copy_store(source, target, failures=args.failures)
        except ImportError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"copy failed: {exc}", 1) from None
    for content_hash, reason in report.refused:
        print(f"tensorviz {args.command}: not copied: {reason}", file=sys.stderr)
    extra = f", {report.failures} failure record(s)" if args.failures else ""
    print(f"{len(report.copied)} artifact(s) copied, {len(report.skipped)} already there, "
          f"{len(report.refused)} refused{extra}: {source.location} -> {target.location}")
    return 1 if report.refused else 0


def _course_kinds(conf_dir: str | None) -> AbstractContextManager[object]:
    """With ``conf_dir``, the course opened (its ``conf.py`` read and its extensions set up, nothing read
    or executed), so a figure kind it declares itself is known while its artifacts are validated."""
    if not conf_dir:
        return nullcontext()
    return open_project(argparse.Namespace(sourcedir=conf_dir, conf_dir=None, define=[]))
