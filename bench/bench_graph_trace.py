"""Trace, lay out and draw real PyTorch decoders of 1, 4, 12 and 24 blocks, end to end.

Why: issue 3's target is a 12-block decoder traced, laid out and rendered in under 5 s on this
machine, with cost growing no worse than about n log n. The blocks are the course's own
``DecoderBlock`` from lessons/models/tiny_llama.py, stacked in an ``nn.ModuleList``, so the
capture sees exactly what a lesson page would. Each figure is the median of a few runs, and the
growth per step is printed next to the n log n growth for the same node counts.

Run: ``python bench/bench_graph_trace.py`` (about 30 s).
"""

from __future__ import annotations

import importlib.util
import math
import statistics
import sys
import time
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402
from sphinx_tensorviz.features.graph.layout import layout_graph  # noqa: E402
from sphinx_tensorviz.features.graph.svg import graph_to_svg  # noqa: E402

MODEL_FILE = ROOT / "lessons" / "models" / "tiny_llama.py"
_spec = importlib.util.spec_from_file_location("tiny_llama", MODEL_FILE)
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)  # type: ignore[union-attr]


class StackedDecoder(nn.Module):
    """TinyLlama with ``blocks`` decoder blocks instead of one."""

    def __init__(self, blocks: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(32, 16)
        self.blocks = nn.ModuleList(tiny.DecoderBlock(16, 4, 40) for _ in range(blocks))
        self.final_norm = tiny.RMSNorm(16)
        self.lm_head = nn.Linear(16, 32, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))


def median_time(run, repeats: int = 3) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    torch.manual_seed(0)
    tokens = torch.ones(1, 6, dtype=torch.int64)
    rows, previous = [], None
    print(f"{'blocks':>6} {'nodes':>6} {'edges':>6} {'trace s':>8} {'layout s':>9} {'svg s':>7} {'total s':>8} "
          f"{'svg KiB':>8} {'growth':>7} {'n log n':>8}")
    for blocks in (1, 4, 12, 24):
        model = StackedDecoder(blocks).eval()
        trace_s, captured = median_time(lambda: capture_torch_graph(model, (tokens,), str(Path(__file__).resolve())))
        graph = captured["graph"]  # type: ignore[index]
        layout_s, layout = median_time(lambda: layout_graph(graph, depth=2))
        svg_s, svg = median_time(lambda: graph_to_svg(graph, layout, id_prefix="bench", title="t", desc="d"))
        total = trace_s + layout_s + svg_s
        n = len(graph["layers"])
        nlogn = n * math.log2(n)
        growth = f"{total / previous[0]:.2f}" if previous else "-"
        expected = f"{nlogn / previous[1]:.2f}" if previous else "-"
        print(f"{blocks:>6} {n:>6} {len(graph['connections']):>6} {trace_s:>8.3f} {layout_s:>9.3f} {svg_s:>7.3f} "
              f"{total:>8.3f} {len(svg) / 1024:>8.1f} {growth:>7} {expected:>8}")
        rows.append((blocks, total))
        previous = (total, nlogn)
    twelve = dict(rows)[12]
    verdict = "meets" if twelve < 5 else "MISSES"
    print(f"12-block decoder traced, laid out (depth 2) and drawn in {twelve:.2f} s: {verdict} the 5 s target")


if __name__ == "__main__":
    main()
