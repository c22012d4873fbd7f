"""Deterministic compound layout for captured model graphs: one layout per view.

The layout is *compound*: every open module is laid out on its own (its visible children only,
by :func:`.graph_layered.layout_local`), bottom-up, and then placed as one big box in its parent's
layout, the way TensorBoard and Model Explorer do it. Edges entering or leaving a module are
routed through one *in port* at the top and one *out port* at the bottom of the module's box, so
they are laid out (with dummies) inside the module too. Which modules are open is decided by
:func:`.graph_view.build_view` (see there for ``depth`` and ``expand``).

:func:`layout_graph` gives the default view that the SVG, the outline, the PDF and the tour share;
:func:`module_frames` gives every module's own layout with its child modules collapsed, which the
page script composes when a reader opens modules (see :mod:`.graph_frames`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from .layered import Local, layout_local
from .view import (
    FONT_HEADER,
    FONT_LABEL,
    FONT_SUB,
    LINE_HEIGHT,
    GraphView,
    build_view,
    leaf_size,
    node_text,
    shape_text,
    short_label,
    text_width,
)

__all__ = [
    "Box",
    "EdgeRoute",
    "Frame",
    "GraphLayout",
    "GraphView",
    "build_view",
    "layout_graph",
    "module_frames",
    "short_label",
    "shape_text",
    "text_width",
    "FONT_LABEL",
    "FONT_SUB",
    "FONT_HEADER",
    "LINE_HEIGHT",
]

CLUSTER_PAD = 12.0
CLUSTER_HEADER = 28.0
ROOT_PAD = 8.0

_IN = "\x00in"
_OUT = "\x00out"

# --------------------------------------------------------------------------------------------
# Public result types
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Box:
    """One positioned box. ``x``/``y`` are the top-left corner, in px, in layout coordinates.

    ``label`` is the display text (relative to the enclosing module); ``sublabel`` the second
    line (the op, or ``"▸ 12 ops"`` for a collapsed module). ``is_cluster`` boxes are open
    modules drawn behind their children; ``collapsed`` boxes stand for a whole hidden module.
    """

    id: str
    label: str
    op: str
    kind: str
    x: float
    y: float
    w: float
    h: float
    collapsed: bool
    is_cluster: bool
    parent: Optional[str]
    sublabel: str = ""
    rank: int = 0
    level: int = 0
    hidden_count: int = 0
    in_x: Optional[float] = None
    out_x: Optional[float] = None

    @property
    def cx(self) -> float:
        """Centre x, for callers that anchor text or links on the box."""
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        """Centre y."""
        return self.y + self.h / 2


@dataclass(frozen=True)
class EdgeRoute:
    """A visible edge: from ``source`` box to ``target`` box along ``points`` (px, layout coords).

    ``label`` is the producer's output shape such as ``"1×6×16"`` when the graph records it;
    ``ids`` are the original connection ids merged into this edge.
    """

    source: str
    target: str
    points: tuple[tuple[float, float], ...]
    label: Optional[str]
    ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class GraphLayout:
    """The whole positioned graph; ``width``/``height`` bound every box and edge point."""

    boxes: tuple[Box, ...]
    edges: tuple[EdgeRoute, ...]
    width: float
    height: float
    depth: int
    expand: tuple[str, ...] = ()
    _index: Mapping[str, Box] = field(default_factory=dict, repr=False, compare=False)

    def box(self, node_id: str) -> Box:
        """Look a box up by node id (KeyError when the node is hidden)."""
        return self._index[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._index

# --------------------------------------------------------------------------------------------
# Compound layout
# --------------------------------------------------------------------------------------------


def _ancestry(view: GraphView, node_id: str) -> list[Optional[str]]:
    """[node, enclosing open module, ..., None (the root)]."""
    chain: list[Optional[str]] = [node_id]
    cur = view.parent[node_id]
    while cur is not None:
        chain.append(cur)
        cur = view.parent[cur]
    chain.append(None)
    return chain


def _segments(view: GraphView, s: str, t: str) -> list[tuple[Optional[str], str, str]]:
    """Split an edge into (module, local source, local target) hops through module ports."""
    anc_s, anc_t = _ancestry(view, s), _ancestry(view, t)
    pos_t = {c: i for i, c in enumerate(anc_t)}
    i_s = next(i for i in range(1, len(anc_s)) if anc_s[i] in pos_t)
    lca = anc_s[i_s]
    i_t = pos_t[lca]
    hops: list[tuple[Optional[str], str, str]] = []
    for i in range(i_s - 1):
        hops.append((anc_s[i + 1], anc_s[i], _OUT))  # type: ignore[arg-type]
    hops.append((lca, anc_s[i_s - 1], anc_t[i_t - 1]))  # type: ignore[arg-type]
    for j in range(i_t - 2, -1, -1):
        hops.append((anc_t[j + 1], _IN, anc_t[j]))  # type: ignore[arg-type]
    return hops


def _local_graphs(view: GraphView) -> tuple[list[Optional[str]], dict[Optional[str], list[str]],
                                           dict[Optional[str], dict[tuple[str, str], None]], list]:
    """Each open module's local graph: its visible children, and the hops between them and its ports.

    A module's hops do not depend on which of its child modules are open (an edge into a child
    is the hop ``(u, child)`` either way): that is what lets the page compose module frames.
    """
    clusters: list[Optional[str]] = [None] + [n for n in view.visible if view.is_cluster(n)]
    members: dict[Optional[str], list[str]] = {c: [] for c in clusters}
    for node_id in view.visible:
        members[view.parent[node_id]].append(node_id)
    local_pairs: dict[Optional[str], dict[tuple[str, str], None]] = {c: {} for c in clusters}
    edge_hops = []
    for e in view.edges:
        hops = _segments(view, e.source, e.target)
        for c, u, v in hops:
            local_pairs[c][(u, v)] = None
        edge_hops.append(hops)
    return clusters, members, local_pairs, edge_hops


def layout_graph(graph: Mapping[str, Any], *, depth: int = 2, expand: Collection[str] = ()) -> GraphLayout:
    """Lay out ``graph`` (``layers`` + ``connections``) top to bottom; deterministic.

    See the module docstring for what ``depth`` and ``expand`` open.
    """
    view = build_view(graph, depth=depth, expand=expand)
    clusters, members, local_pairs, edge_hops = _local_graphs(view)
    texts = {n: node_text(view, n) for n in view.visible if not view.is_cluster(n)}
    size: dict[str, tuple[float, float]] = {n: leaf_size(*texts[n]) for n in texts}
    anchor: dict[str, tuple[float, float]] = {n: (w / 2, w / 2) for n, (w, _) in size.items()}
    local: dict[Optional[str], Local] = {}
    # Deepest modules first, so every child module's size and ports are known to its parent.
    for c in sorted(clusters, key=lambda c: 0 if c is None else view.level[c], reverse=True):
        local[c] = _layout_cluster(view, c, members[c], local_pairs[c], size, anchor)
        if c is not None:
            size[c] = (local[c].width, local[c].height)
            anchor[c] = (local[c].in_x, local[c].out_x)
    return _assemble(view, clusters, members, local, size, texts, edge_hops, depth, expand)


def _layout_cluster(view: GraphView, c: Optional[str], kids: list[str],
                    pairs: Mapping[tuple[str, str], None], size: Mapping[str, tuple[float, float]],
                    anchor: Mapping[str, tuple[float, float]]) -> Local:
    """Index one module's local graph and run the layered layout on it."""
    index = {k: i for i, k in enumerate(kids)}
    index[_IN], index[_OUT] = len(kids), len(kids) + 1
    int_pairs = [(index[u], index[v]) for u, v in pairs]
    has_in = any(u == _IN for u, _ in pairs)
    has_out = any(v == _OUT for _, v in pairs)
    if c is None:
        margin = (ROOT_PAD, ROOT_PAD, ROOT_PAD, ROOT_PAD)
        min_w = 0.0
    else:
        label = short_label(view.nodes[c], view.parent[c])
        margin = (CLUSTER_PAD, CLUSTER_HEADER, CLUSTER_PAD, CLUSTER_PAD)
        min_w = text_width("▾ " + label, FONT_HEADER) + 8
    lay = layout_local([size[k] for k in kids], [anchor[k] for k in kids], int_pairs,
                        has_in, has_out, margin, min_w)
    lay.routes = {pair: lay.routes[ip] for pair, ip in zip(pairs, int_pairs)}  # type: ignore[misc]
    return lay


def _r(v: float) -> float:
    """Round to 0.1 px so the SVG text is stable and small."""
    return round(v, 1) + 0.0


def _assemble(view: GraphView, clusters: list[Optional[str]], members: dict[Optional[str], list[str]],
              local: dict[Optional[str], Local], size: dict[str, tuple[float, float]],
              texts: dict[str, tuple[str, str]], edge_hops: list, depth: int,
              expand: Collection[str]) -> GraphLayout:
    """Turn the per-module layouts into absolute boxes and edge polylines."""
    origin: dict[Optional[str], tuple[float, float]] = {None: (0.0, 0.0)}
    boxes: dict[str, Box] = {}
    for c in sorted(clusters, key=lambda c: 0 if c is None else view.level[c]):  # parents first
        ox, oy = origin[c]
        lay = local[c]
        for i, k in enumerate(members[c]):
            w, h = size[k]
            cx, cy = lay.centers[i]
            x, y = ox + cx - w / 2, oy + cy - h / 2
            origin[k] = (x, y)
            box = _make_box(view, k, texts, x, y, w, h, lay.ranks[i])
            if k in local:
                box = replace(box, in_x=_r(x + local[k].in_x), out_x=_r(x + local[k].out_x))
            boxes[k] = box
    ordered = [boxes[c] for c in sorted(boxes, key=lambda n: (not boxes[n].is_cluster,
                                                            boxes[n].level, view.order[n]))]
    edges = []
    for e, hops in zip(view.edges, edge_hops):
        pts: list[tuple[float, float]] = []
        for c, u, v in hops:
            ox, oy = origin[c]
            for px, py in local[c].routes[(u, v)]:
                p = (_r(ox + px), _r(oy + py))
                if not pts or pts[-1] != p:
                    pts.append(p)
        edges.append(EdgeRoute(e.source, e.target, tuple(pts), e.label, tuple(e.ids)))
    root = local[None]
    return GraphLayout(tuple(ordered), tuple(edges), _r(root.width), _r(root.height), depth,
                       tuple(str(x) for x in expand), {b.id: b for b in ordered})


def _make_box(view: GraphView, k: str, texts: dict[str, tuple[str, str]], x: float, y: float,
              w: float, h: float, rank: int) -> Box:
    node = view.nodes[k]
    cluster = view.is_cluster(k)
    is_module = node.get("kind") == "module"
    label, sub = texts.get(k, (short_label(node, view.parent[k]), ""))
    return Box(id=k, label=label, op=str(node.get("op") or ""), kind=str(node.get("kind") or "layer"),
               x=_r(x), y=_r(y), w=_r(w), h=_r(h), collapsed=is_module and not cluster,
               is_cluster=cluster, parent=view.parent[k], sublabel=sub, rank=rank,
               level=view.level[k], hidden_count=view.hidden_count.get(k, 0) if is_module else 0)


@dataclass(frozen=True)
class Frame:
    """One module laid out on its own, its child modules collapsed, in its box's coordinates.

    ``edges`` are the module's hops: between children, or from the in port / to the out port,
    where ``source`` / ``target`` is the module itself. ``module`` is None for the top level.
    """

    module: Optional[str]
    width: float
    height: float
    in_x: float
    out_x: float
    boxes: tuple[Box, ...]
    edges: tuple[EdgeRoute, ...]


def module_frames(graph: Mapping[str, Any]) -> dict[Optional[str], Frame]:
    """Every module's own layout (and the top level's) with its child modules collapsed.

    The same layered layout as :func:`layout_graph`, run once per module on the graph with every
    module open but sized as if its children were closed; linear in the graph's size overall.
    """
    view = build_view(graph, depth=1 << 30)
    clusters, members, local_pairs, edge_hops = _local_graphs(view)
    texts = {n: node_text(view, n) for n in view.visible}
    size = {n: leaf_size(*texts[n]) for n in texts}
    anchor = {n: (w / 2, w / 2) for n, (w, _) in size.items()}
    labels: dict[tuple[Optional[str], str, str], Optional[str]] = {}
    for e, hops in zip(view.edges, edge_hops):
        for hop in hops:
            if hop[1] != _IN and not labels.get(hop):
                labels[hop] = e.label
    frames: dict[Optional[str], Frame] = {}
    for c in clusters:
        lay = _layout_cluster(view, c, members[c], local_pairs[c], size, anchor)
        boxes = []
        for i, k in enumerate(members[c]):
            (w, h), (cx, cy) = size[k], lay.centers[i]
            box = _make_box(view, k, texts, cx - w / 2, cy - h / 2, w, h, lay.ranks[i])
            boxes.append(replace(box, collapsed=box.kind == "module", is_cluster=False))
        edges = tuple(
            EdgeRoute(c if u == _IN else u, c if v == _OUT else v,  # type: ignore[arg-type]
                      tuple((_r(x), _r(y)) for x, y in pts), labels.get((c, u, v)))
            for (u, v), pts in lay.routes.items()
        )
        frames[c] = Frame(c, _r(lay.width), _r(lay.height), _r(lay.in_x), _r(lay.out_x), tuple(boxes), edges)
    return frames
