"""Element ids of drawn nodes: defined once, used by the graph drawer, the diagram drawer, the
tour's links and the page script's composed views.

Why one injective function: ids used to be slugs made unique by drawing order (``a.b`` ->
``a-b``, then ``a-b`` -> ``a-b-2``), so anything that computed an id on its own (the tour) could
point at the wrong node. :func:`id_token` maps every node id to a distinct token without looking
at the other nodes: letters, digits, ``.`` and ``-`` are kept (ids stay readable), ``_`` is
written ``__`` and any other character ``_<hex code point>_``.
"""

from __future__ import annotations

import re

__all__ = ["check_prefix", "element_id", "id_token", "line_id", "slugify"]

_KEEP = re.compile(r"[A-Za-z0-9.-]")


def id_token(node_id: str) -> str:
    """``mul@block.ffn#0`` -> ``mul_40_block.ffn_23_0``; distinct ids give distinct tokens."""
    out = []
    for ch in str(node_id):
        if _KEEP.fullmatch(ch):
            out.append(ch)
        elif ch == "_":
            out.append("__")
        else:
            out.append(f"_{ord(ch):x}_")
    return "".join(out) or "_"


def element_id(prefix: str, kind: str, node_id: str) -> str:
    """The page id of node ``node_id`` drawn as ``kind`` (``n``: a box, ``c``: an open module)."""
    return f"{prefix}-{kind}-{id_token(node_id)}"


def line_id(prefix: str, key: str, line: int) -> str:
    """The page id of a line in a source panel: ``<figure>-L12`` in the model file (``key`` ``""``),
    ``<figure>-<file slug>-L12`` in any other file. Graph nodes and tour steps link to these."""
    return f"{prefix}-L{line}" if not key else f"{prefix}-{slugify(key)}-L{line}"


def slugify(text: str) -> str:
    """A readable class-name or file-name fragment (not unique): ``mul@block.ffn#0`` -> ``mul-block-ffn-0``."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "node"


_PREFIX = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")


def check_prefix(prefix: str) -> str:
    """``prefix`` itself if it can start every element id of a figure, else ValueError."""
    if not _PREFIX.match(prefix):
        raise ValueError(f"id_prefix must match {_PREFIX.pattern!r}: {prefix!r}")
    return prefix
