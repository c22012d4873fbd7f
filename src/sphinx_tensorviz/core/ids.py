"""Node ids of traced graphs: one syntax for capture, ``:target:``, ``:checkpoints:`` and the picture.

An op's id is ``<module>.<op>_<n>`` (``block.ffn.mul_0``; ``add_0`` at the top level) and
it is drawn as ``mul_0`` inside its module's box, so the label a reader sees is also
something ``:target:`` accepts. A torch.nn layer called again is ``<name>:<n>``; a
function group is ``<parent>.<function>()``. There is no ``#`` anywhere: in MyST an
option value ``matmul #0`` is cut at the ``#`` as a comment.

Artifacts recorded before this scheme used ``mul@block.ffn#0`` and ``shared#1``; those
spellings are still accepted and translated.
"""

from __future__ import annotations

import re

__all__ = ["LEGACY_OP", "canonical", "op_id"]

LEGACY_OP = re.compile(r"^(?P<short>[^@\s]+)@(?P<parent>[^#\s]+)#(?P<n>\d+)$")
_LEGACY_CALL = re.compile(r"^(?P<name>[^@#\s]+)#(?P<n>\d+)$")


def op_id(short: str, module: str | None, n: int) -> str:
    """The id of the ``n``-th ``short`` op run directly by ``module`` (None: the model itself)."""
    return f"{module}.{short}_{n}" if module else f"{short}_{n}"


def canonical(name: str) -> str:
    """``mul@block.ffn#0`` -> ``block.ffn.mul_0``; ``shared#1`` -> ``shared:1``; others unchanged."""
    name = name.strip()
    match = LEGACY_OP.match(name)
    if match:
        parent = match["parent"]
        return op_id(match["short"], None if parent == "root" else parent, int(match["n"]))
    match = _LEGACY_CALL.match(name)
    if match:
        return f"{match['name']}:{match['n']}"
    return name
