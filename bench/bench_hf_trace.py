"""Trace, lay out and draw transformers' own LlamaForCausalLM with 2, 8 and 24 layers.

Why: issue 10 brings library models as they ship; their graphs are larger than the course's own
(function groups, mask builders, library source excerpts), so this measures what a page with a
real ``LlamaForCausalLM`` costs. Each model is built from a tiny config (width 32, 4 query heads
sharing 2 key/value heads, eager attention so every op is drawn, random weights, no download).
Each figure is the median of three runs; the growth per step is printed next to the growth in
nodes, and the 2-layer model's total is the baseline the ratios are measured against, in the
same run, so the ratios compare across machines where the seconds do not.

Run: ``python bench/bench_hf_trace.py`` (about a minute).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402
from sphinx_tensorviz.features.graph.layout import layout_graph  # noqa: E402
from sphinx_tensorviz.features.graph.svg import graph_to_svg  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_graph_trace import median_time  # noqa: E402


def tiny_llama(layers: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         attn_implementation="eager")
    return LlamaForCausalLM(config).eval()


def main() -> None:
    kwargs = {"input_ids": torch.arange(6).unsqueeze(0), "use_cache": False}
    print(f"{'layers':>6} {'nodes':>6} {'edges':>6} {'groups':>6} {'trace s':>8} {'layout s':>9} {'svg s':>7} "
          f"{'total s':>8} {'vs 2':>6} {'nodes vs 2':>10} {'sources KiB':>11}")
    baseline = None
    for layers in (2, 8, 24):
        model = tiny_llama(layers)
        trace_s, captured = median_time(lambda: capture_torch_graph(model, (), __file__, kwargs=kwargs))
        graph = captured["graph"]  # type: ignore[index]
        layout_s, layout = median_time(lambda: layout_graph(graph, depth=3))
        svg_s, _ = median_time(lambda: graph_to_svg(graph, layout, id_prefix="bench", title="t", desc="d"))
        total = trace_s + layout_s + svg_s
        nodes = len(graph["layers"])
        groups = sum(1 for n in graph["layers"] if n.get("group") == "function")
        sources = len(json.dumps(graph.get("sources", {}))) / 1024
        baseline = baseline or (total, nodes)
        print(f"{layers:>6} {nodes:>6} {len(graph['connections']):>6} {groups:>6} {trace_s:>8.3f} {layout_s:>9.3f} "
              f"{svg_s:>7.3f} {total:>8.3f} {total / baseline[0]:>6.2f} {nodes / baseline[1]:>10.2f} {sources:>11.1f}")


if __name__ == "__main__":
    main()
