"""The generic layered (Sugiyama) layout of one module's children, integer-indexed for speed.

Why pure Python: Graphviz needs a system binary, is slow on long edges and is not byte-for-byte
deterministic, and a docs build must produce the same figure on every machine. This module knows
nothing about modules or nodes: it places boxes of given sizes joined by given pairs, with an
optional *in port* at the top and *out port* at the bottom through which edges from outside enter
and leave. :mod:`.graph_layout` runs it once per open module and nests the results.

The steps:

1. cycle breaking (iterative DFS; back edges are reversed, so cyclic input never hangs),
2. layering (longest path, then sources such as ``Parameter`` nodes pulled down next to their
   first consumer),
3. dummy nodes on edges spanning several layers,
4. crossing reduction (a few barycenter sweeps, keeping the best ordering by exact crossing count),
5. x placement (neighbour averaging resolved by isotonic regression, which keeps order and
   spacing at O(n) per layer),
6. y placement (layers stacked top to bottom).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Local", "layout_local"]

NODE_SEP = 22.0
DUMMY_W = 6.0
DUMMY_SEP = 10.0
RANK_SEP = 38.0
SWEEPS = 6
X_PASSES = 4
DUMMY_PULL = 0.15

@dataclass
class Local:
    """One module's children placed in its own box: centres, ranks, port x and edge polylines."""

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


def layout_local(sizes: Sequence[tuple[float, float]], anchors: Sequence[tuple[float, float]],
                  pairs: Sequence[tuple[int, int]], has_in: bool, has_out: bool,
                  margin: tuple[float, float, float, float], min_inner_w: float = 0.0) -> Local:
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
                  margin: tuple[float, float, float, float], min_inner_w: float) -> Local:
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
    return Local(width, height, centers, [rank[v] for v in range(n)], in_x, out_x, routes)

