"""Activation patching's cost (``tv-patch``, issue 27): time per patched forward pass, the lesson's
figure, and how the cost grows with layers x positions x heads.

Runs the worker's own patching (``features/patch/patch_torch.py``) in this process, on tiny unmodified
``LlamaForCausalLM`` models (random weights, width 64) and on the induction-heads lesson's trained model
(its committed weights), with no build around it, on one thread. For each configuration it prints
the fastest of ``--reps`` wall times (a busy machine only ever slows a run, so the fastest moves
least) of:

* ``1 pass``: one forward pass of the corrupted input alone (the baseline of this run);
* ``batched``: the whole figure as ``tv-patch`` runs it: clean and corrupted once, then every place in
  batches of up to 64 rows;
* ``one by one`` (the first row and the lesson's): the same places with one forward pass each, what
  batching saves;

and the ratios per patched pass (batched / places / 1 pass) and batched / one-by-one, then how the
batched time grows with layers, positions and heads, as ratios against the first row of the same
run. Ratios, not seconds, are what compare across machines: a per-pass ratio well under 1 is the
batching at work.

Usage: ``python bench/bench_patch.py [--reps 3]``; under a minute on two busy cores.

Measured for issue 27 (two cores shared with six other sessions, one thread): the 2-layer, 8-head,
32-position residual figure (64 patched passes) in 49 to 60 ms, 0.33 to 0.38 of a single forward pass
per patched pass, half the time of one pass per place; its 16 heads in 26 ms. With positions the
time grows faster than the places (each row is the whole input: 8, 16, 32 tokens gave 0.09x, 0.33x,
1x); with layers about with the places (1, 2, 4 layers: 0.12x, 1x, 3.4x). The lesson's figures take
1.0 ms (4 heads) and 1.4 ms (22 places), a tenth and a fifteenth of one pass per place. On a machine
this busy, single timings move by 2x between runs; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import transformers

from sphinx_tensorviz.execute.worker.causal_lm import find_parts
from sphinx_tensorviz.features.patch import patch_torch
from sphinx_tensorviz.features.patch.metric import logit_diff

REPO = Path(__file__).resolve().parents[1]
LESSON_MODEL = REPO / "lessons" / "models" / "induction.py"
STORE = REPO / "lessons" / "tensorviz_artifacts"
#: the lesson's inputs (induction-heads.md, "Which head makes the copy")
LESSON_CLEAN = [3, 14, 7, 0, 11, 5, 9, 12, 3, 14, 7]
LESSON_CORRUPTED = [3, 14, 7, 1, 11, 5, 9, 12, 3, 14, 7]


def llama(layers: int, heads: int) -> Any:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=layers,
                                      num_attention_heads=heads, num_key_value_heads=heads, max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def lesson_model() -> Any:
    """The trained induction model with the weights of its last committed snapshot."""
    from safetensors.torch import load_file

    spec = importlib.util.spec_from_file_location("induction_bench", LESSON_MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.make_model(seed=0)
    model.load_state_dict(load_file(STORE / "weights" / f"{last_snapshot()}.safetensors"))
    return model.eval()


def last_snapshot() -> str:
    """The sha256 of the last kept snapshot of the lesson's training (its artifact lists them)."""
    import json

    for path in sorted(STORE.glob("*.json")):
        data = json.loads(path.read_text("utf-8")).get("data", {})
        if data.get("kind") == "train" and data.get("snapshots"):
            return max(data["snapshots"], key=lambda s: s["step"])["sha256"]
    raise SystemExit("no training artifact in lessons/tensorviz_artifacts")


def fastest(run: Callable[[], Any], reps: int) -> float:
    run()  # warm up (first-call allocations, lazy imports)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def one_by_one(model: Any, parts: Any, patch: str, clean: list[int], corrupted: list[int], kwargs: dict) -> None:
    """Every place with a forward pass of its own (ROWS = 1): the cost batching avoids."""
    saved = patch_torch.ROWS
    patch_torch.ROWS = 1
    try:
        patch_torch.patch_model(model, parts, patch, clean, corrupted, metric, kwargs)
    finally:
        patch_torch.ROWS = saved


def metric(logits: Any) -> Any:
    return logit_diff(logits, 1, 2)


def measure(name: str, model: Any, patch: str, clean: list[int], corrupted: list[int], reps: int,
            kwargs: dict | None = None, alone: bool = False) -> dict[str, float]:
    kwargs = kwargs or {}
    parts = find_parts(model)
    places = len(parts.layers) * (parts.heads if patch == "heads" else len(clean))
    ids = torch.tensor([corrupted])
    with torch.no_grad():
        single = fastest(lambda: model(ids, **kwargs), reps)
    batched = fastest(lambda: patch_torch.patch_model(model, parts, patch, clean, corrupted, metric, kwargs), reps)
    separate = fastest(lambda: one_by_one(model, parts, patch, clean, corrupted, kwargs), 1) if alone else None
    row = {"places": places, "single": single, "batched": batched}
    said = f"{separate * 1e3:>11.1f}" if separate else f"{'':>11}"
    ratio = f"{batched / separate:>9.3f}" if separate else ""
    print(f"{name:<34} {patch:<9} {places:>6} {single * 1e3:>9.2f} {batched * 1e3:>10.1f} {said} "
          f"{batched / places / single:>13.3f} {ratio}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    reps = parser.parse_args().reps
    torch.set_grad_enabled(False)
    torch.set_num_threads(1)  # the machine's other work decides less of the result
    print(f"{'model':<34} {'patch':<9} {'places':>6} {'1 pass ms':>9} {'batched ms':>10} {'one by one':>11} "
          f"{'per pass / 1':>13} {'b / one':>9}")
    base = measure("llama 2 layers, 8 heads, 32 tokens", llama(2, 8), "residual", *inputs(32), reps,
                   {"use_cache": False}, alone=True)
    grown = []
    # one dimension at a time, from 2 layers x 8 heads x 32 tokens
    for layers, heads, length in ((1, 8, 32), (4, 8, 32), (2, 8, 8), (2, 8, 16), (2, 2, 32), (2, 4, 32), (2, 8, 32)):
        model = llama(layers, heads)
        for patch in ("residual", "heads"):
            grown.append(((layers, heads, length, patch), measure(
                f"llama {layers} layers, {heads} heads, {length} tokens", model, patch, *inputs(length), reps,
                {"use_cache": False})))
    trained = lesson_model()
    lesson = [measure("lesson: trained induction model", trained, patch, LESSON_CLEAN, LESSON_CORRUPTED, reps,
                      alone=True) for patch in ("heads", "residual")]
    print("\nbatched time against the first row (2 layers x 8 heads x 32 tokens, residual) of this run:")
    for (layers, heads, length, patch), row in grown:
        print(f"  {layers} layers x {heads} heads x {length:>2} tokens, {patch:<8}: places "
              f"{row['places'] / base['places']:.2f}x, time {row['batched'] / base['batched']:.2f}x")
    for patch, row in zip(("heads", "residual"), lesson):
        print(f"  the lesson's figure, {patch:<8}: time {row['batched'] / base['batched']:.3f}x "
              f"({row['batched'] * 1e3:.1f} ms for {row['places']} patched passes)")


def inputs(length: int) -> tuple[list[int], list[int]]:
    """A clean input and a corrupted one that differs in its first token."""
    clean = [(7 * n + 3) % 64 for n in range(length)]
    return clean, [(clean[0] + 1) % 64, *clean[1:]]


if __name__ == "__main__":
    main()
