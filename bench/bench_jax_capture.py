"""Cost of the JAX graph capture against a bare trace and call of the same model.

Why: the capture adds a profile hook while ``jax.make_jaxpr`` runs, evaluates the walked graph
once under ``jax.jit`` (for the output and the checkpoint values) and clears JAX's caches so
its named scopes never reach the lesson's own jitted calls. This prints, for the course's Flax
NNX block (lessons/models/nnx_block.py) and NNX MLPs of 2, 8 and 16 blocks, the median capture
time, the median of ``make_jaxpr`` plus one jitted call of the same model (the baseline,
measured in the same run) and their ratio.

Run: ``python bench/bench_jax_capture.py`` (about a minute on two cores).
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from flax import nnx  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sphinx_tensorviz.features.graph.capture.jax_graph import capture_jax_graph  # noqa: E402

LESSON = ROOT / "lessons" / "models" / "nnx_block.py"
STACK = ROOT / "tests" / "roots" / "test-graph-jaxlibs" / "models" / "jaxlibs.py"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_seconds(run, reps: int = 3) -> float:
    run()  # warm imports
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def baseline(model, x) -> None:
    graphdef, state = nnx.split(model)
    jax.make_jaxpr(lambda s, y: nnx.merge(graphdef, s)(y))(state, x)
    jax.jit(lambda s, y: nnx.merge(graphdef, s)(y))(state, x).block_until_ready()
    jax.clear_caches()


def main() -> None:
    lesson, stack = load(LESSON), load(STACK)
    cases = [("NNX lesson block", lesson.Block(), jnp.ones((6, 16)), str(LESSON), ("mlp",))]
    for depth in (2, 8, 16):
        cases.append((f"NNX MLP, {depth} blocks", stack.nnx_mlp(depth=depth), jnp.ones((3, 8)), str(STACK), ("layers.0",)))
    print(f"{'model':24s} {'nodes':>6s} {'capture':>9s} {'baseline':>9s} {'ratio':>6s}")
    for name, model, x, path, checkpoints in cases:
        nodes = len(capture_jax_graph(model, (x,), path)["graph"]["layers"])
        captured = median_seconds(lambda: capture_jax_graph(model, (x,), path, checkpoints=checkpoints))
        bare = median_seconds(lambda: baseline(model, x))
        print(f"{name:24s} {nodes:6d} {captured:8.2f}s {bare:8.2f}s {captured / bare:6.1f}")


if __name__ == "__main__":
    main()
