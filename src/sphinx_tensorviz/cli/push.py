"""``tensorviz push FOLDER STORE``: copy a local folder's artifacts to a store (see :mod:`.transfer`)."""

from __future__ import annotations

from typing import Any

from .transfer import add_transfer_parser


def add_parser(subparsers: Any) -> None:
    add_transfer_parser(subparsers, "push", "FOLDER", "STORE",
                        "copy the artifacts of a local folder to a store (e.g. s3://bucket/course)")
