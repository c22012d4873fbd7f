"""The names most like one an author wrote, for messages that say what to write instead."""

from __future__ import annotations

import difflib
from collections.abc import Collection

__all__ = ["closest_names"]


def closest_names(name: str, candidates: Collection[str], n: int = 4) -> list[str]:
    """The dotted names most like ``name``, best first, each once (none below a 0.6 likeness).

    Paths are compared whole and by their last parts, so a renamed level (transformers 5's ViT
    ``encoder.layer.0`` is ``layers.0``) and a missing prefix (``layers.0`` for ``vit.layers.0``)
    both find the path meant. A name of one part (``softmax``, ``relu``: an op as an author calls
    it) is compared with each path's last part as well, so it finds ``h.0.attn.softmax_0``; a
    longer name is not, or its last part alone (``0``, ``attn``) would match half the model.
    """
    wanted = name.split(".")
    shortest_tail = 1 if len(wanted) == 1 else 2

    def score(candidate: str) -> float:
        parts = candidate.split(".")
        tails = (difflib.SequenceMatcher(None, ".".join(wanted[-k:]), ".".join(parts[-k:])).ratio()
                 for k in range(shortest_tail, min(len(wanted), len(parts)) + 1))
        return max([difflib.SequenceMatcher(None, name, candidate).ratio(), *(0.95 * r for r in tails)])

    ranked = sorted({c: score(c) for c in candidates}.items(), key=lambda item: (-item[1], len(item[0]), item[0]))
    return [candidate for candidate, value in ranked[:n] if value >= 0.6]
