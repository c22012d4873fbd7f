"""A traced graph as the other directives of its page see it: the same view as its figure.

A guided tour links to the boxes the figure draws and activations follow its sweep, so both need
the graph's default view, the ids of what is drawn, and where a hidden node is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..core.ids import canonical
from .graph_view import GraphView, build_view, short_label
from .ids import element_id

__all__ = ["GraphOnPage"]


@dataclass(frozen=True)
class GraphOnPage:
    """A traced graph as other directives on its page see it: the same view as its figure."""

    figure_id: str
    artifact: dict[str, Any]
    depth: int
    expand: tuple[str, ...]

    @cached_property
    def view(self) -> GraphView:
        """What the figure shows by default (computed once per page, shared by every step)."""
        return build_view(self.artifact["data"], depth=self.depth, expand=self.expand)

    @property
    def node_ids(self) -> list[str]:
        return list(self.view.nodes)

    @cached_property
    def drawn_labels(self) -> dict[str, list[str]]:
        """Label as drawn in its box (``mul #0``, ``q_proj``) -> the ids of the nodes drawn so."""
        found: dict[str, list[str]] = {}
        for node_id, node in self.view.nodes.items():
            found.setdefault(short_label(node, self.view.parent[node_id]), []).append(node_id)
        return found

    def resolve(self, target: str) -> str | None:
        """The node id ``target`` names: an id (old spellings too), or a label as drawn that only one
        node has."""
        for candidate in (target, canonical(target)):
            if candidate in self.view.nodes:
                return candidate
        ids = self.drawn_labels.get(target) or self.drawn_labels.get(target.replace(" #", "_"), [])
        return ids[0] if len(ids) == 1 else None

    def anchor(self, node_id: str) -> tuple[str, str]:
        """(visible node id, element id) for a node, which may sit inside a collapsed module."""
        view = self.view
        shown = view.rep.get(node_id, node_id)
        return shown, element_id(self.figure_id, "c" if view.is_cluster(shown) else "n", shown)
