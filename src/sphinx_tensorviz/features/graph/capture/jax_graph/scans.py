"""A module first called outside a scan and then as the scan's body (Flax Linen's ``nn.RNN``
sets up its carry with the cell, then scans the cell) is drawn inside the scan's box.

The loop is what the cell is for, so its box moves into ``scan x N``, where every op of the
body is drawn; the ops it ran before the loop (the carry's set-up, run once) stay where they
ran, in the module's former container, under their own ids.
"""

from __future__ import annotations

from typing import Any, Protocol


class _Nodes(Protocol):
    nodes: list[dict[str, Any]]
    by_id: dict[str, dict[str, Any]]

    def ancestors(self, node_id: str | None) -> list[str]: ...


def move_into_scan(graph: _Nodes, module: dict[str, Any], container: str | None) -> None:
    """Put ``module`` under ``container`` if that lies in a scan the module is outside of, within
    the module's own former container (so nesting stays a tree of what contains what)."""
    chain = graph.ancestors(container)
    scan = next((node_id for node_id in chain if graph.by_id[node_id].get("group") == "scan"), None)
    if scan is None or scan in graph.ancestors(module["id"]):
        return
    former = module["parent"]
    if former is not None and former not in chain:
        return
    for node in graph.nodes:  # what ran before the loop stays outside it
        if node["parent"] == module["id"] and node["kind"] == "layer" and node["op"] not in ("Parameter", "Buffer"):
            node["parent"] = former
    module["parent"] = container
