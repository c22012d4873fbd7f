"""Deterministic layered layout for captured model graphs.

Why pure Python: Graphviz needs a system binary, is slow on long edges and is not byte-for-byte
deterministic, and a docs build must produce the same figure on every machine.

The layout is *compound*: every open module is laid out on its own (its visible children only),
bottom-up, and then placed as one big box in its parent's layout, the way TensorBoard and Model
Explorer do it. Within one module the classic Sugiyama steps run:

1. cycle breaking (iterative DFS; back edges are reversed, so cyclic input never hangs),
2. layering (longest path, then sources such as ``Parameter`` nodes pulled down next to their
   first consumer),
3. dummy nodes on edges spanning several layers,
4. crossing reduction (a few barycenter sweeps, keeping the best ordering by exact crossing count),
5. x placement (neighbour averaging resolved by isotonic regression, which keeps order and
   spacing at O(n) per layer),
6. y placement (layers stacked top to bottom).

Edges entering or leaving a module are routed through one *in port* at the top and one *out port*
at the bottom of the module's box, so they are laid out (with dummies) inside the module too.

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
from dataclasses import dataclass, field, replace
from typing import Any, Optional

__all__ = [
    "Box",
    "EdgeRoute",
    "GraphLayout",
    "GraphView",
    "build_view",
    "layout_graph",
    "short_label",
    "shape_text",
    "text_width",
    "FONT_LABEL",
    "FONT_SUB",
    "FONT_HEADER",
    "LINE_HEIGHT",
]

FONT_LABEL = 13.0
FONT_SUB = 12.0
FONT_HEADER = 12.0
CHAR_EM = 0.6
LINE_HEIGHT = 1.3
NODE_PAD_X = 10.0
NODE_PAD_Y = 6.0
MIN_NODE_W = 72.0
NODE_SEP = 22.0
DUMMY_W = 6.0
DUMMY_SEP = 10.0
RANK_SEP = 38.0
CLUSTER_PAD = 12.0
CLUSTER_HEADER = 28.0
ROOT_PAD = 8.0
SWEEPS = 6
X_PASSES = 4
DUMMY_PULL = 0.15

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


def _node_text(view: GraphView, node_id: str) -> tuple[str, str]:
    node = view.nodes[node_id]
    label = short_label(node, view.parent[node_id])
    if node.get("kind") == "module":
        count = view.hidden_count.get(node_id, 0)
        return label, f"▸ {count} op{'s' if count != 1 else ''}"
    op = str(node.get("op") or "")
    return label, ("" if op.lower() == label.lower() else op)


def _leaf_size(label: str, sublabel: str) -> tuple[float, float]:
    w = max(text_width(label, FONT_LABEL), text_width(sublabel, FONT_SUB)) + 2 * NODE_PAD_X
    lines = FONT_LABEL * LINE_HEIGHT + (FONT_SUB * LINE_HEIGHT if sublabel else 0.0)
    return max(MIN_NODE_W, round(w)), round(lines + 2 * NODE_PAD_Y)


# --------------------------------------------------------------------------------------------
# One module's layered layout (integer-indexed for speed)
# --------------------------------------------------------------------------------------------


@dataclass
class _Local:
    width: float
    height: float
    centers: list[tuple[float, float]]
    ranks: list[int]
    in_x: float
    out_x: float
    routes: dict[tuple[int, int], list[tuple[float, float]]]


def _break_cycles(n: int, pairs: Sequence[tuple[int, int]]) -> list[bool]:
    """Flags, per pair, whether it is a DFS back edge (reversed to make the graph acyclic)."""
    out: list[list[int]] = [[] for _ in range(n)]
    for k, (u, _) in enumerate(pairs):
        out[u].append(k)
    state = [0] * n
    back = [False] * len(pairs)
    for root in range(n):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            u, i = stack[-1]
            if i == len(out[u]):
                state[u] = 2
                stack.pop()
                continue
            stack[-1] = (u, i + 1)
            k = out[u][i]
            v = pairs[k][1]
            if state[v] == 1:
                back[k] = True
            elif state[v] == 0:
                state[v] = 1
                stack.append((v, 0))
    return back


def _longest_path_ranks(n: int, dag: Sequence[tuple[int, int]]) -> list[int]:
    """Longest path from the sources, then pure sources pulled down beside their first consumer."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in dag:
        succ[a].append(b)
        indeg[b] += 1
    rank = [0] * n
    remaining = indeg[:]
    queue = [v for v in range(n) if remaining[v] == 0]
    head = 0
    while head < len(queue):
        u = queue[head]
        head += 1
        for v in succ[u]:
            rank[v] = max(rank[v], rank[u] + 1)
            remaining[v] -= 1
            if remaining[v] == 0:
                queue.append(v)
    for v in range(n):
        if indeg[v] == 0 and succ[v]:
            rank[v] = min(rank[s] for s in succ[v]) - 1
    return rank


def _count_crossings(layers: list[list[int]], down: list[list[int]], pos: list[int]) -> int:
    """Exact crossings between adjacent layers (sort + Fenwick inversion count, O(E log V))."""
    total = 0
    for r in range(len(layers) - 1):
        seq = [pos[v] for u in layers[r] for v in sorted(down[u], key=pos.__getitem__)]
        size = len(layers[r + 1])
        tree = [0] * (size + 1)
        seen = 0
        for p in seq:
            i = p + 1
            le = 0
            while i > 0:
                le += tree[i]
                i -= i & -i
            total += seen - le
            seen += 1
            i = p + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
    return total


def _order_layers(layers: list[list[int]], up: list[list[int]], down: list[list[int]],
                  n_total: int) -> list[list[int]]:
    """Barycenter sweeps down and up; the ordering with the fewest crossings is kept."""
    pos = [0] * n_total

    def index(layer: list[int]) -> None:
        for i, v in enumerate(layer):
            pos[v] = i

    def reorder(layer: list[int], nbrs: list[list[int]]) -> list[int]:
        keyed = []
        for i, v in enumerate(layer):
            ns = nbrs[v]
            key = sum(pos[u] for u in ns) / len(ns) if ns else float(i)
            keyed.append((key, i, v))
        keyed.sort()
        return [v for _, _, v in keyed]

    for layer in layers:
        index(layer)
    for r in range(1, len(layers)):  # initial order: one down sweep from insertion order
        layers[r] = reorder(layers[r], up)
        index(layers[r])
    best = [layer[:] for layer in layers]
    best_c = _count_crossings(layers, down, pos)
    for _ in range(SWEEPS):
        if best_c == 0:
            break
        for r in range(len(layers) - 2, -1, -1):
            layers[r] = reorder(layers[r], down)
            index(layers[r])
        for r in range(1, len(layers)):
            layers[r] = reorder(layers[r], up)
            index(layers[r])
        c = _count_crossings(layers, down, pos)
        if c < best_c:
            best_c, best = c, [layer[:] for layer in layers]
    return best


def _isotonic_place(desired: list[float], weights: list[float], seps: list[float]) -> list[float]:
    """Closest positions to ``desired`` that keep the order and minimum separations (PAV)."""
    offsets, acc = [], 0.0
    for s in seps:
        acc += s
        offsets.append(acc)
    blocks: list[list[float]] = []  # [weight, weighted sum, count]
    for d, w, o in zip(desired, weights, offsets):
        blocks.append([w, w * (d - o), 1])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] > blocks[-1][1] / blocks[-1][0]:
            w2, s2, c2 = blocks.pop()
            blocks[-1][0] += w2
            blocks[-1][1] += s2
            blocks[-1][2] += c2
    out: list[float] = []
    i = 0
    for w, s, c in blocks:
        y = s / w
        for _ in range(int(c)):
            out.append(y + offsets[i])
            i += 1
    return out


def _assign_x(layers: list[list[int]], up: list[list[int]], down: list[list[int]],
              widths: list[float], is_dummy: list[bool], off_in: list[float],
              off_out: list[float]) -> list[float]:
    """Pull every node towards the mean x of its neighbours, layer by layer, keeping spacing.

    ``off_in``/``off_out`` are where edges attach relative to a node's centre (a module's ports
    need not be centred), so that it is the *attachment points* that line up.
    """
    x = [0.0] * len(widths)
    seps_of: list[list[float]] = []
    weights_of: list[list[float]] = []
    for layer in layers:
        seps, prev = [], None
        for v in layer:
            if prev is None:
                seps.append(0.0)
            else:
                gap = DUMMY_SEP if (is_dummy[v] or is_dummy[prev]) else NODE_SEP
                seps.append((widths[prev] + widths[v]) / 2 + gap)
            prev = v
        seps_of.append(seps)
        weights_of.append([4.0 if is_dummy[v] else 1.0 for v in layer])
        for v, xv in zip(layer, _isotonic_place([0.0] * len(layer), [1.0] * len(layer), seps)):
            x[v] = xv

    def pull(v: int, use_up: bool, use_down: bool) -> float:
        # Real nodes listen mostly to real neighbours: long edges then bend around the main
        # path instead of dragging it sideways.
        tw = sw = 0.0
        for ns, own, other, on in ((up[v], off_in, off_out, use_up), (down[v], off_out, off_in, use_down)):
            if not on:
                continue
            for u in ns:
                w = DUMMY_PULL if (is_dummy[u] and not is_dummy[v]) else 1.0
                tw += w
                sw += w * (x[u] + other[u] - own[v])
        return sw / tw if tw else x[v]

    def sweep(r: int, use_up: bool, use_down: bool) -> None:
        layer = layers[r]
        desired = [pull(v, use_up, use_down) for v in layer]
        for v, xv in zip(layer, _isotonic_place(desired, weights_of[r], seps_of[r])):
            x[v] = xv

    for _ in range(X_PASSES):
        for r in range(1, len(layers)):
            sweep(r, True, False)
        for r in range(len(layers) - 2, -1, -1):
            sweep(r, False, True)
    for r in range(len(layers)):
        sweep(r, True, True)
    return x


def _layout_local(sizes: Sequence[tuple[float, float]], anchors: Sequence[tuple[float, float]],
                  pairs: Sequence[tuple[int, int]], has_in: bool, has_out: bool,
                  margin: tuple[float, float, float, float], min_inner_w: float = 0.0) -> _Local:
    """Lay out one module's children.

    ``sizes[i]`` is child ``i``'s (w, h); ``anchors[i]`` the x offsets from its left edge where
    edges enter (top) and leave (bottom). Index ``len(sizes)`` is the in port and
    ``len(sizes) + 1`` the out port. ``margin`` is (left, top, right, bottom) inside the box.
    """
    n = len(sizes)
    p_in, p_out = n, n + 1
    nn = n + 2
    back = _break_cycles(nn, pairs)
    dag_index: dict[tuple[int, int], int] = {}
    dag: list[tuple[int, int]] = []
    for (u, v), rev in zip(pairs, back):
        key = (v, u) if rev else (u, v)
        if key not in dag_index:
            dag_index[key] = len(dag)
            dag.append(key)
    inner = [(a, b) for a, b in dag if a < n and b < n]
    rank = _longest_path_ranks(n, inner) + [0, 0]
    shift = 1 if has_in else 0
    for v in range(n):
        rank[v] += shift
    top_rank = max(rank[:n], default=shift - 1 if has_in else -1)
    rank[p_out] = top_rank + 1
    used = [v for v in range(n)] + ([p_in] if has_in else []) + ([p_out] if has_out else [])
    n_ranks = (rank[p_out] + 1) if has_out else top_rank + 1
    widths = [w for w, _ in sizes] + [0.0, 0.0]
    is_dummy = [False] * nn
    up: list[list[int]] = [[] for _ in range(nn)]
    down: list[list[int]] = [[] for _ in range(nn)]
    layers: list[list[int]] = [[] for _ in range(max(n_ranks, 0))]
    for v in used:
        layers[rank[v]].append(v)
    chains: list[list[int]] = []
    for a, b in dag:
        chain = [a]
        for r in range(rank[a] + 1, rank[b]):
            d = len(widths)
            widths.append(DUMMY_W)
            is_dummy.append(True)
            rank.append(r)
            up.append([])
            down.append([])
            layers[r].append(d)
            chain.append(d)
        chain.append(b)
        for s, t in zip(chain, chain[1:]):
            down[s].append(t)
            up[t].append(s)
        chains.append(chain)
    layers = _order_layers(layers, up, down, len(widths))
    off_in = [a[0] - w / 2 for a, (w, _) in zip(anchors, sizes)] + [0.0] * (len(widths) - n)
    off_out = [a[1] - w / 2 for a, (w, _) in zip(anchors, sizes)] + [0.0] * (len(widths) - n)
    x = _assign_x(layers, up, down, widths, is_dummy, off_in, off_out)
    return _finish_local(sizes, anchors, pairs, back, dag_index, chains, layers, rank, x, widths,
                         has_in, has_out, margin, min_inner_w)


def _finish_local(sizes: Sequence[tuple[float, float]], anchors: Sequence[tuple[float, float]],
                  pairs: Sequence[tuple[int, int]], back: list[bool], dag_index: dict[tuple[int, int], int],
                  chains: list[list[int]], layers: list[list[int]], rank: list[int], x: list[float],
                  widths: list[float], has_in: bool, has_out: bool,
                  margin: tuple[float, float, float, float], min_inner_w: float) -> _Local:
    """y placement, normalisation into the box, and edge polylines (box coordinates)."""
    n = len(sizes)
    left, top, right, bottom = margin
    lo = min((x[v] - widths[v] / 2 for layer in layers for v in layer), default=0.0)
    hi = max((x[v] + widths[v] / 2 for layer in layers for v in layer), default=0.0)
    inner_w = max(hi - lo, min_inner_w)
    dx = left + (inner_w - (hi - lo)) / 2 - lo
    rank_top: list[float] = []
    rank_h: list[float] = []
    cur = top
    for r, layer in enumerate(layers):
        is_port_rank = (has_in and r == 0) or (has_out and r == len(layers) - 1)
        h = 0.0 if is_port_rank else max((sizes[v][1] for v in layer if v < n), default=0.0)
        rank_top.append(cur)
        rank_h.append(h)
        if not is_port_rank:
            cur += h + RANK_SEP
    content_bottom = cur - RANK_SEP if cur > top else top
    height = content_bottom + bottom
    width = inner_w + left + right
    if has_in:
        rank_top[0], rank_h[0] = 0.0, 0.0
    if has_out:
        rank_top[-1], rank_h[-1] = height, 0.0
    centers = [(x[v] + dx, rank_top[rank[v]] + rank_h[rank[v]] / 2) for v in range(n)]

    def bottom_anchor(v: int) -> tuple[float, float]:
        if v >= n:
            return (x[v] + dx, 0.0 if v == n else height)
        w, h = sizes[v]
        cx, cy = centers[v]
        return (cx - w / 2 + anchors[v][1], cy + h / 2)

    def top_anchor(v: int) -> tuple[float, float]:
        if v >= n:
            return (x[v] + dx, 0.0 if v == n else height)
        w, h = sizes[v]
        cx, cy = centers[v]
        return (cx - w / 2 + anchors[v][0], cy - h / 2)

    routes: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for (u, v), rev in zip(pairs, back):
        chain = chains[dag_index[(v, u) if rev else (u, v)]]
        pts = [bottom_anchor(chain[0])]
        if chain[0] == n:  # in port: cross the header band vertically, clear of the title
            pts.append((pts[0][0], top - 6.0))
        for d in chain[1:-1]:
            r = rank[d]
            pts.append((x[d] + dx, rank_top[r]))
            if rank_h[r] > 0:
                pts.append((x[d] + dx, rank_top[r] + rank_h[r]))
        pts.append(top_anchor(chain[-1]))
        routes[(u, v)] = pts[::-1] if rev else pts
    in_x = x[n] + dx if has_in else width / 2
    out_x = x[n + 1] + dx if has_out else width / 2
    return _Local(width, height, centers, [rank[v] for v in range(n)], in_x, out_x, routes)


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


def layout_graph(graph: Mapping[str, Any], *, depth: int = 2, expand: Collection[str] = ()) -> GraphLayout:
    """Lay out ``graph`` (``layers`` + ``connections``) top to bottom; deterministic.

    See the module docstring for what ``depth`` and ``expand`` open.
    """
    view = build_view(graph, depth=depth, expand=expand)
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
    texts = {n: _node_text(view, n) for n in view.visible if not view.is_cluster(n)}
    size: dict[str, tuple[float, float]] = {n: _leaf_size(*texts[n]) for n in texts}
    anchor: dict[str, tuple[float, float]] = {n: (w / 2, w / 2) for n, (w, _) in size.items()}
    local: dict[Optional[str], _Local] = {}
    # Deepest modules first, so every child module's size and ports are known to its parent.
    for c in sorted(clusters, key=lambda c: 0 if c is None else view.level[c], reverse=True):
        local[c] = _layout_cluster(view, c, members[c], local_pairs[c], size, anchor)
        if c is not None:
            size[c] = (local[c].width, local[c].height)
            anchor[c] = (local[c].in_x, local[c].out_x)
    return _assemble(view, clusters, members, local, size, texts, edge_hops, depth, expand)


def _layout_cluster(view: GraphView, c: Optional[str], kids: list[str],
                    pairs: Mapping[tuple[str, str], None], size: Mapping[str, tuple[float, float]],
                    anchor: Mapping[str, tuple[float, float]]) -> _Local:
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
    lay = _layout_local([size[k] for k in kids], [anchor[k] for k in kids], int_pairs,
                        has_in, has_out, margin, min_w)
    lay.routes = {pair: lay.routes[ip] for pair, ip in zip(pairs, int_pairs)}  # type: ignore[misc]
    return lay


def _r(v: float) -> float:
    """Round to 0.1 px so the SVG text is stable and small."""
    return round(v, 1) + 0.0


def _assemble(view: GraphView, clusters: list[Optional[str]], members: dict[Optional[str], list[str]],
              local: dict[Optional[str], _Local], size: dict[str, tuple[float, float]],
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
