"""Benchmark the pure-Python graph layout and SVG writer on synthetic decoder graphs.

Why: a model page must build in seconds even for a 24-block decoder drawn fully expanded, and the
cost should grow like n log n, not n^2. The graphs follow the captured-graph schema (``layers``
with module hierarchy and ``outputs`` shapes, ``connections``); no torch is needed.

Run: ``python bench/bench_graph_layout.py`` (about 10-30 s).
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from sphinx_tensorviz.features.graph.layout import layout_graph  # noqa: E402
from sphinx_tensorviz.features.graph.svg import graph_to_svg  # noqa: E402

WIDTH, HIDDEN, SEQ = 64, 172, 6


class _Builder:
    """Accumulates layers/connections the way a capture would: module first, then its ops."""

    def __init__(self) -> None:
        self.layers: list[dict[str, Any]] = []
        self.connections: list[dict[str, Any]] = []
        self.line = 1

    def module(self, mid: str, parent: Optional[str]) -> str:
        self.layers.append({"id": mid, "label": mid, "op": "Module", "kind": "module", "parent": parent,
                            "params": {}, "source": {"line": self.line, "endLine": self.line}})
        return mid

    def node(self, nid: str, op: str, parent: Optional[str], inputs: list[str], shape: list[int],
             kind: str = "layer", params: Optional[dict] = None) -> str:
        self.line += 1
        self.layers.append({"id": nid, "label": nid, "op": op, "kind": kind, "parent": parent,
                            "params": params or {}, "source": {"line": self.line, "endLine": self.line},
                            "outputs": [{"shape": shape, "dtype": "float32"}]})
        for src in inputs:
            self.connections.append({"id": f"edge-{len(self.connections) + 1}", "source": src, "target": nid,
                                     "sourcePort": None, "targetPort": None})
        return nid


def _norm(b: _Builder, mod: str, x: str) -> str:
    b.module(mod, mod.rpartition(".")[0] or None)
    act = [1, SEQ, WIDTH]
    gain = b.node(f"{mod}.gain", "Parameter", mod, [], [WIDTH])
    sq = b.node(f"pow@{mod}#0", "torch.pow", mod, [x], act)
    mean = b.node(f"mean@{mod}#0", "torch.mean", mod, [sq], [1, SEQ, 1])
    eps = b.node(f"add@{mod}#0", "torch.add", mod, [mean], [1, SEQ, 1])
    rs = b.node(f"rsqrt@{mod}#0", "torch.rsqrt", mod, [eps], [1, SEQ, 1])
    xn = b.node(f"mul@{mod}#0", "torch.mul", mod, [x, rs], act)
    return b.node(f"mul@{mod}#1", "torch.mul", mod, [xn, gain], act)


def _rope(b: _Builder, mod: str, x: str) -> str:
    b.module(mod, mod.rpartition(".")[0])
    act = [1, 4, SEQ, WIDTH // 4]
    cos = b.node(f"python@{mod}#0", "Python", mod, [x], act)
    sin = b.node(f"python@{mod}#1", "Python", mod, [x], act)
    a = b.node(f"mul@{mod}#0", "torch.mul", mod, [x, cos], act)
    half = b.node(f"python@{mod}#2", "Python", mod, [x], act)
    c = b.node(f"mul@{mod}#1", "torch.mul", mod, [half, sin], act)
    s = b.node(f"add@{mod}#0", "torch.add", mod, [a, c], act)
    return b.node(f"flatten@{mod}#0", "Flatten", mod, [s], act, params={"start_dim": -2})


def _attention(b: _Builder, mod: str, x: str) -> str:
    b.module(mod, mod.rpartition(".")[0])
    heads = [1, 4, SEQ, WIDTH // 4]
    lin = {"in_features": WIDTH, "out_features": WIDTH, "bias": False}
    q = b.node(f"{mod}.query", "Linear", mod, [x], [1, SEQ, WIDTH], params=lin)
    k = b.node(f"{mod}.key", "Linear", mod, [x], [1, SEQ, WIDTH], params=lin)
    v = b.node(f"{mod}.value", "Linear", mod, [x], [1, SEQ, WIDTH], params=lin)
    qh = b.node(f"view@{mod}#0", "torch.view", mod, [q], heads)
    kh = b.node(f"view@{mod}#1", "torch.view", mod, [k], heads)
    vh = b.node(f"view@{mod}#2", "torch.view", mod, [v], heads)
    qr = _rope(b, f"{mod}.query_rope", qh)
    kr = _rope(b, f"{mod}.key_rope", kh)
    kt = b.node(f"transpose@{mod}#0", "torch.transpose", mod, [kr], [1, 4, WIDTH // 4, SEQ])
    sc = b.node(f"matmul@{mod}#0", "torch.matmul", mod, [qr, kt], [1, 4, SEQ, SEQ])
    dv = b.node(f"div@{mod}#0", "torch.div", mod, [sc], [1, 4, SEQ, SEQ])
    mk = b.node(f"masked_fill@{mod}#0", "torch.masked_fill", mod, [dv], [1, 4, SEQ, SEQ])
    sm = b.node(f"{mod}.softmax", "Softmax", mod, [mk], [1, 4, SEQ, SEQ], params={"dim": -1})
    ctx = b.node(f"matmul@{mod}#1", "torch.matmul", mod, [sm, vh], heads)
    merged = b.node(f"reshape@{mod}#0", "torch.reshape", mod, [ctx], [1, SEQ, WIDTH])
    return b.node(f"{mod}.project", "Linear", mod, [merged], [1, SEQ, WIDTH], params=lin)


def _ffn(b: _Builder, mod: str, x: str) -> str:
    b.module(mod, mod.rpartition(".")[0])
    up = {"in_features": WIDTH, "out_features": HIDDEN, "bias": False}
    g = b.node(f"{mod}.gate", "Linear", mod, [x], [1, SEQ, HIDDEN], params=up)
    u = b.node(f"{mod}.up", "Linear", mod, [x], [1, SEQ, HIDDEN], params=up)
    s = b.node(f"{mod}.silu", "SiLU", mod, [g], [1, SEQ, HIDDEN])
    m = b.node(f"mul@{mod}#0", "torch.mul", mod, [s, u], [1, SEQ, HIDDEN])
    return b.node(f"{mod}.down", "Linear", mod, [m], [1, SEQ, WIDTH],
                  params={"in_features": HIDDEN, "out_features": WIDTH, "bias": False})


def decoder_graph(blocks: int) -> dict[str, Any]:
    """A LLaMA-style decoder with ``blocks`` blocks, ~50 drawable nodes per block."""
    b = _Builder()
    x = b.node("input", "Input", None, [], [1, SEQ], kind="input")
    x = b.node("embedding", "Embedding", None, [x], [1, SEQ, WIDTH], params={"num_embeddings": 32})
    b.module("layers", None)
    for i in range(blocks):
        blk = b.module(f"layers.{i}", "layers")
        h = _attention(b, f"{blk}.attention", _norm(b, f"{blk}.attention_norm", x))
        r = b.node(f"add@{blk}#0", "torch.add", blk, [x, h], [1, SEQ, WIDTH])
        f = _ffn(b, f"{blk}.ffn", _norm(b, f"{blk}.ffn_norm", r))
        x = b.node(f"add@{blk}#1", "torch.add", blk, [r, f], [1, SEQ, WIDTH])
    x = _norm(b, "final_norm", x)
    x = b.node("lm_head", "Linear", None, [x], [1, SEQ, 32])
    b.node("output", "Output", None, [x], [1, SEQ, 32], kind="output")
    return {"layers": b.layers, "connections": b.connections}


def _median_ms(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def main() -> None:
    print(f"{'blocks':>6} {'mode':>8} {'nodes':>6} {'edges':>6} {'vis':>5} {'layout ms':>10} {'svg ms':>7} "
          f"{'svg KiB':>8} {'t/dbl':>7} {'nlogn/dbl':>9}")
    for mode, depth in (("default", 2), ("expanded", 99)):
        prev: Optional[tuple[int, float]] = None
        for blocks in (1, 4, 12, 24, 96):
            g = decoder_graph(blocks)
            drawable = sum(1 for n in g["layers"] if n["kind"] != "module")
            runs = 5 if blocks <= 24 else 3
            lay_ms, layout = _median_ms(lambda: layout_graph(g, depth=depth), runs)
            svg_ms, svg = _median_ms(lambda: graph_to_svg(g, layout, id_prefix="bench", title="decoder",
                                                          desc="synthetic"), runs)
            total = lay_ms + svg_ms
            ratio = nlogn = ""
            if prev:  # growth per doubling of n, so rows of different spacing compare
                n0, t0 = prev
                doublings = math.log2(drawable / n0)
                ratio = f"{(total / t0) ** (1 / doublings):.2f}"
                nlogn = f"{((drawable * math.log(drawable)) / (n0 * math.log(n0))) ** (1 / doublings):.2f}"
            print(f"{blocks:>6} {mode:>8} {drawable:>6} {len(g['connections']):>6} {len(layout.boxes):>5} "
                  f"{lay_ms:>10.1f} {svg_ms:>7.1f} {len(svg.encode()) / 1024:>8.1f} {ratio:>7} {nlogn:>9}")
            prev = (drawable, total)
    print("t/dbl: growth of layout+svg time per doubling of nodes since the previous row; "
          "nlogn/dbl: the same for n log n (2.0 would be linear).")
    flat = {"layers": [], "connections": []}
    for n in range(5000):  # one flat module-free chain with skip edges: worst case for one layout
        flat["layers"].append({"id": f"n{n}", "label": f"n{n}", "op": "torch.add", "kind": "layer", "parent": None})
        if n:
            flat["connections"].append({"id": f"a{n}", "source": f"n{n - 1}", "target": f"n{n}"})
        if n >= 5 and n % 5 == 0:
            flat["connections"].append({"id": f"s{n}", "source": f"n{n - 5}", "target": f"n{n}"})
    ms, _ = _median_ms(lambda: layout_graph(flat), 3)
    print(f"flat 5000-node graph (no modules, skip edges): layout {ms:.0f} ms")


if __name__ == "__main__":
    main()
