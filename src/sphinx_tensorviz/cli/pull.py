"""``tensorviz pull STORE FOLDER``: copy a store's artifacts to a local folder (see :mod:`.transfer`)."""

from __future__ import annotations

from typing import Any

from .transfer import add_transfer_parser


def add_parser(subparsers: Any) -> None:
    add_transfer_parser(subparsers, "pull", "STORE", "FOLDER",
                        "copy the artifacts of a store (e.g. s3://bucket/course) to a local folder")
