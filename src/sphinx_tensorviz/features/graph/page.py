"""A traced graph as the other directives of its page see it: the same view as its figure.

A guided tour links to the boxes the figure draws and activations follow its sweep, so both need
the graph's default view, the ids of what is drawn, and where a hidden node is shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from docutils import nodes

from ...core.ids import canonical
from ...core.nodes import tensorviz_figure
from ...core.sweep import Sweep
from ...render.ids import element_id
from ...render.page import Page
from ...render.sweep_figures import point_figure_id
from ...warnings_ import Subtype, warn
from .directive import FAILED_GRAPH
from .view import GraphView, build_view, short_label

#: the directive whose figures are graphs
GRAPH_DIRECTIVE = "tv-graph"


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


def named_graphs(page: Page) -> dict[str, GraphOnPage | None]:
    """Named ``tv-graph`` figures of this page (``None`` where the artifact is missing: the figure
    itself says why), read once per page. A swept graph's tours and links go to its first point's figure."""
    if __name__ not in page.memo:
        page.memo[__name__] = _read_named_graphs(page)
    return page.memo[__name__]


def _read_named_graphs(page: Page) -> dict[str, GraphOnPage | None]:
    found: dict[str, GraphOnPage | None] = {}
    for node in page.document.findall(tensorviz_figure):
        request = node["request"]
        if request is None or request.directive != GRAPH_DIRECTIVE:
            continue
        usable = page.usable(page.store.read_artifact(request.content_hash))
        figure_id = node["figure_id"] if node.get("sweep") is None else point_figure_id(node["figure_id"], 0)
        for name in node["names"]:
            found[name] = usable and GraphOnPage(
                figure_id, usable, request.render.get("depth", 2), tuple(request.render.get("expand", ()))
            )
    return found


def graph_for(page: Page, node: nodes.Element, what: str) -> GraphOnPage | None:
    """The graph ``node`` names in ``graph``; a located warning when the page has none of that name."""
    name, graphs = node["graph"], named_graphs(page)
    failed = failed_graphs(page) if name not in graphs else {}
    if name in failed:
        warn(f"{what}: the tv-graph named {name!r} failed ({failed[name]}: see its warning), "
             "so there is nothing to show", Subtype.target, location=node)
        return None
    if name not in graphs:
        known = ", ".join(sorted(graphs)) or "none on this page"
        warn(f"{what}: no tv-graph named {name!r} on this page (named graphs: {known})", Subtype.target,
             location=node)
        return None
    return graphs[name]  # None: the graph itself already warns about its missing artifact


def failed_graphs(page: Page) -> dict[str, str]:
    """Named ``tv-graph`` directives of this page that failed to read: name -> ``file:line``
    (relative to the source folder)."""
    srcdir = Path(page.env.srcdir)
    found: dict[str, str] = {}
    for box in page.document.findall(nodes.error):
        if box.get(FAILED_GRAPH):
            source = Path(box.source or page.env.doc2path(page.docname))
            where = source.relative_to(srcdir).as_posix() if source.is_relative_to(srcdir) else source.name
            found[box[FAILED_GRAPH]] = f"{where}:{box.line}"
    return found


def swept_graphs(page: Page) -> dict[str, tuple[str, Sweep]]:
    """Named swept ``tv-graph`` figures: name -> (figure id, sweep)."""
    return {name: (node["figure_id"], node["sweep"])
            for node in page.document.findall(tensorviz_figure)
            if node["request"] is not None and node["request"].directive == GRAPH_DIRECTIVE and node.get("sweep")
            for name in node["names"]}


def drawn_from_graph(page: Page, node: nodes.Element, graph: Any, make: Callable[[], nodes.Node],
                     **context: Any) -> nodes.Node:
    """A page pass's node drawn from one of the page's graphs (:class:`GraphOnPage`):
    kept whole (:meth:`~...render.part_cache.PartCache.whole`) for HTML builders, by the graph's artifact, figure id and
    view, and ``context``; else made by ``make``."""
    if page.kept is None:
        return make()
    named_by = {"graph": [graph.figure_id, graph.depth, list(graph.expand)], "context": context}
    return page.kept.whole(node, [graph.artifact], named_by, make)
