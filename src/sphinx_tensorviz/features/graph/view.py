"""Which nodes a graph shows at a depth, what edges connect them, and how big each box is.

View selection is the first of the three layout stages (this module, :mod:`.graph_layered` for one
module's layered layout, :mod:`.graph_layout` for nesting the modules into one picture). The SVG,
the outline, the PDF, the tour and the per-module layout data all start from :func:`build_view`,
so they agree on what is visible.

Depth and expansion
-------------------
A module at nesting level ``L`` (a top-level module has ``L == 1``) is **open** iff
``L <= depth``, or it is named in ``expand``, or one of its descendants is named in ``expand``.
So ``depth=0`` draws every top-level module as one collapsed box, ``depth=1`` opens the
top-level modules only, and the default ``depth=2`` opens two levels. A module with no children
is never open. A module is drawn only when all its ancestors are open.

Edges are re-routed to the outermost collapsed ancestor of each endpoint, deduplicated (the first
edge's label wins) and self-loops are dropped. Connections whose endpoint is an *open* module are
summaries of the edges between its children and are not drawn.

All sizes are CSS px; text is at least 12 px; text width is estimated as 0.6 em per character,
exact for the monospace font the SVG uses.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

__all__ = [
    "FONT_HEADER", "FONT_LABEL", "FONT_SUB", "LINE_HEIGHT", "GraphView", "build_view", "leaf_size",
    "node_text", "shape_text", "short_label", "text_width",
]

FONT_LABEL = 13.0
FONT_SUB = 12.0
FONT_HEADER = 12.0
CHAR_EM = 0.6
LINE_HEIGHT = 1.3
NODE_PAD_X = 10.0
NODE_PAD_Y = 6.0
MIN_NODE_W = 72.0

# --------------------------------------------------------------------------------------------
# Text helpers shared with the SVG writer
# --------------------------------------------------------------------------------------------


def text_width(text: str, font_size: float) -> float:
    """Estimated advance width of ``text`` (monospace: 0.6 em per character)."""
    return len(text) * CHAR_EM * font_size


def shape_text(node: Mapping[str, Any]) -> Optional[str]:
    """``"1×6×16"`` for the node's first recorded output, or None when no shape is known."""
    outputs = node.get("outputs") or ()
    if not outputs or not isinstance(outputs, Sequence):
        return None
    first = outputs[0]
    shape = first.get("shape") if isinstance(first, Mapping) else None
    if shape is None or isinstance(shape, (str, bytes)):
        return str(shape) if shape else None
    return "×".join(str(d) for d in shape) if len(shape) else "scalar"


def short_label(node: Mapping[str, Any], parent: Optional[str]) -> str:
    """Display name inside the enclosing module: ``block.ffn.up`` in ``block.ffn`` -> ``up``.

    Function-level ops named ``mul@block.ffn#0`` become ``mul #0``: the module is already the
    enclosing box, and the full id stays in the tooltip and the outline.
    """
    label = str(node.get("label") or node.get("id") or "")
    if "@" in label:
        name, _, rest = label.partition("@")
        index = rest.rpartition("#")[2] if "#" in rest else ""
        return f"{name} #{index}" if index else name
    if parent and label.startswith(parent + "."):
        return label[len(parent) + 1 :]
    return label


# --------------------------------------------------------------------------------------------
# Visibility: which nodes are drawn, what edges connect them
# --------------------------------------------------------------------------------------------


@dataclass
class _VEdge:
    source: str
    target: str
    label: Optional[str]
    ids: list[str]


@dataclass
class GraphView:
    """The graph as seen at one depth: visible nodes, open modules, re-routed edges."""

    nodes: dict[str, dict]
    order: dict[str, int]
    parent: dict[str, Optional[str]]
    children: dict[Optional[str], list[str]]
    level: dict[str, int]
    open: set[str]
    rep: dict[str, str]
    hidden_count: dict[str, int]
    visible: list[str]
    edges: list[_VEdge]

    def is_module(self, node_id: str) -> bool:
        """Modules are containers; everything else is drawable."""
        return self.nodes[node_id].get("kind") == "module"

    def is_cluster(self, node_id: str) -> bool:
        """A visible open module, drawn as a frame around its children."""
        return node_id in self.open and self.rep[node_id] == node_id


def _index_nodes(graph: Mapping[str, Any]) -> tuple[dict[str, dict], dict[str, int]]:
    nodes: dict[str, dict] = {}
    for raw in graph.get("layers") or ():
        node_id = str(raw.get("id"))
        if node_id not in nodes:  # first occurrence wins: duplicates must not reorder
            nodes[node_id] = dict(raw, id=node_id)
    return nodes, {node_id: i for i, node_id in enumerate(nodes)}


def _sanitize_parents(nodes: dict[str, dict]) -> dict[str, Optional[str]]:
    """Parent ids that exist and are modules; a parent cycle is cut where it is found."""
    parent: dict[str, Optional[str]] = {}
    for node_id, node in nodes.items():
        p = node.get("parent")
        p = None if p is None else str(p)
        ok = p is not None and p != node_id and nodes.get(p, {}).get("kind") == "module"
        parent[node_id] = p if ok else None
    state: dict[str, int] = {}
    for start in nodes:
        path: list[str] = []
        cur: Optional[str] = start
        while cur is not None and state.get(cur, 0) == 0:
            state[cur] = 1
            path.append(cur)
            nxt = parent[cur]
            if nxt is not None and state.get(nxt) == 1:
                parent[cur] = None  # cycle: cut it here
                nxt = None
            cur = nxt
        for node_id in path:
            state[node_id] = 2
    return parent


def _levels(nodes: dict[str, dict], parent: dict[str, Optional[str]]) -> dict[str, int]:
    """Nesting level: a node without parent has level 1. Memoised so deep trees stay linear."""
    level: dict[str, int] = {}
    for start in nodes:
        path: list[str] = []
        cur: Optional[str] = start
        while cur is not None and cur not in level:
            path.append(cur)
            cur = parent[cur]
        base = 0 if cur is None else level[cur]
        for node_id in reversed(path):
            base += 1
            level[node_id] = base
    return level


def build_view(graph: Mapping[str, Any], *, depth: int = 2, expand: Collection[str] = ()) -> GraphView:
    """Decide what is visible at ``depth`` (see the module docstring) and re-route the edges."""
    nodes, order = _index_nodes(graph)
    parent = _sanitize_parents(nodes)
    level = _levels(nodes, parent)
    children: dict[Optional[str], list[str]] = {None: []}
    for node_id in nodes:
        children.setdefault(parent[node_id], []).append(node_id)
    forced: set[str] = set()
    for name in expand:
        cur: Optional[str] = str(name) if str(name) in nodes else None
        while cur is not None and cur not in forced:
            forced.add(cur)
            cur = parent[cur]
    is_open = {
        n for n, node in nodes.items()
        if node.get("kind") == "module" and children.get(n) and (level[n] <= depth or n in forced)
    }
    by_level = sorted(nodes, key=lambda n: (level[n], order[n]))
    hidden_by: dict[str, Optional[str]] = {}
    for node_id in by_level:  # parents before children
        p = parent[node_id]
        hidden_by[node_id] = None if p is None else (hidden_by[p] or (None if p in is_open else p))
    rep = {n: hidden_by[n] or n for n in nodes}
    hidden_count: dict[str, int] = {}
    for node_id in reversed(by_level):  # children before parents
        if nodes[node_id].get("kind") == "module":
            hidden_count[node_id] = sum(
                hidden_count.get(c, 0) if nodes[c].get("kind") == "module" else 1
                for c in children.get(node_id, ())
            )
    visible = [n for n in nodes if hidden_by[n] is None]
    open_visible = {n for n in is_open if hidden_by[n] is None}
    edges = _reroute_edges(graph, nodes, rep, open_visible)
    return GraphView(nodes, order, parent, children, level, open_visible, rep, hidden_count, visible, edges)


def _reroute_edges(graph: Mapping[str, Any], nodes: dict[str, dict], rep: dict[str, str],
                   open_visible: set[str]) -> list[_VEdge]:
    edges: dict[tuple[str, str], _VEdge] = {}
    for i, conn in enumerate(graph.get("connections") or ()):
        s, t = str(conn.get("source")), str(conn.get("target"))
        if s not in nodes or t not in nodes:
            continue
        rs, rt = rep[s], rep[t]
        if rs == rt or rs in open_visible or rt in open_visible:
            continue
        cid = str(conn.get("id") or f"edge-{i + 1}")
        key = (rs, rt)
        if key in edges:
            edges[key].ids.append(cid)
            edges[key].label = edges[key].label or shape_text(nodes[s])
        else:
            edges[key] = _VEdge(rs, rt, shape_text(nodes[s]), [cid])
    return list(edges.values())


# --------------------------------------------------------------------------------------------
# Box sizes
# --------------------------------------------------------------------------------------------


def node_text(view: GraphView, node_id: str) -> tuple[str, str]:
    """(label, second line) of a drawn leaf box; a module's second line counts what it hides."""
    node = view.nodes[node_id]
    label = short_label(node, view.parent[node_id])
    if node.get("kind") == "module":
        count = view.hidden_count.get(node_id, 0)
        return label, f"▸ {count} op{'s' if count != 1 else ''}"
    op = str(node.get("op") or "")
    return label, ("" if op.lower() == label.lower() else op)


def leaf_size(label: str, sublabel: str) -> tuple[float, float]:
    """(w, h) of a leaf box that fits its two lines of text."""
    w = max(text_width(label, FONT_LABEL), text_width(sublabel, FONT_SUB)) + 2 * NODE_PAD_X
    lines = FONT_LABEL * LINE_HEIGHT + (FONT_SUB * LINE_HEIGHT if sublabel else 0.0)
    return max(MIN_NODE_W, round(w)), round(lines + 2 * NODE_PAD_Y)
