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
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["op_id", "canonical", "resolve", "LEGACY_OP"]

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


def resolve(target: str, layers: Iterable[Mapping[str, Any]]) -> tuple[str | None, list[str]]:
    """(node id, candidates) for what an author wrote: an id, an old-style id, or a drawn label.

    A label such as ``mul_0`` or ``apply_rotary_pos_emb()`` names a node only when exactly
    one node carries it; otherwise the candidates are returned so the warning can list them.
    """
    nodes = list(layers)
    ids = {str(n.get("id")) for n in nodes}
    wanted = canonical(target)
    if wanted in ids:
        return wanted, []
    spaced = wanted.replace(" #", "_").replace(" ", "_")  # "matmul #0" as once drawn
    matches = sorted(str(n["id"]) for n in nodes if str(n.get("label") or "") in (wanted, spaced))
    if not matches:  # a module's or layer's name as drawn inside its parent's box
        matches = sorted(i for i in ids if i.endswith(f".{spaced}"))
    if len(matches) == 1:
        return matches[0], []
    return None, matches
