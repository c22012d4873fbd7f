"""Re-executing one edited JAX figure with the compilation cache, against today's cold run of it.

The figure is the heatmap of ``lessons/transformers-03.md`` (a pre-LN block in eager JAX,
dozens of XLA compilations). In a copy of the seed lessons, with an empty machine-local
cache (a temporary ``XDG_CACHE_HOME``):

1. baseline, as before issue 14: ``tensorviz_worker_pool = False`` and
   ``tensorviz_compilation_cache = False``; ``tensorviz execute`` from an empty store;
2. with the defaults (pool and cache on): one execution fills the cache, then a trivial
   edit of ``models/pre_ln_block.py`` (a comment, so the content hash changes) and
   ``tensorviz execute`` again: the edited figure re-executes.

Compares the figure's own wall time (``execution.seconds`` in its artifact) and the whole
command's, and prints the ratios (issue 14 target: re-execution at least 2x faster).
``--reps`` repeats steps 1 and 2 (medians); the first run of 2 is the first build on a
fresh machine, reported separately.

Usage: ``python bench/bench_compilation_cache.py [--reps 3]``; under a minute per rep.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from projects import fresh, seed_lessons

MODEL = "models/pre_ln_block.py"


def execute(project: Path, env: dict[str, str]) -> tuple[float, float]:
    """(command seconds, the JAX heatmap's recorded execution seconds) of one ``tensorviz execute``."""
    tensorviz = Path(sys.executable).with_name("tensorviz")
    start = time.perf_counter()
    done = subprocess.run([str(tensorviz), "execute", str(project)], capture_output=True, text=True,
                          env={**os.environ, **env})
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"tensorviz execute failed:\n{done.stdout}\n{done.stderr}")
    newest = max((project / "tensorviz_artifacts").glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
    artifact = json.loads(newest.read_text("utf-8"))
    assert artifact["request"]["backend"] == "jax", newest
    return elapsed, float(artifact["execution"]["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tv-bench-cache-") as tmp:
        root = Path(tmp)
        env = {"XDG_CACHE_HOME": str(root / "cache")}
        old = seed_lessons(root / "old", "tensorviz_worker_pool = False\ntensorviz_compilation_cache = False\n")
        new = seed_lessons(root / "new")
        for page in ("llama-decoder.md",):  # only the JAX figure executes
            (old / page).unlink()
            (new / page).unlink()
        for project in (old, new):
            (project / "index.md").write_text("# Bench\n\n```{toctree}\ntransformers-03\n```\n", "utf-8")
        cold, edited, first = [], [], None
        for rep in range(args.reps):
            fresh(old / "tensorviz_artifacts")
            cold.append(execute(old, env))
            fresh(new / "tensorviz_artifacts")
            filled = execute(new, env)  # fills the cache (and is the fresh-machine run the first time)
            first = first or filled
            model = new / MODEL
            model.write_text(model.read_text("utf-8") + f"\n# edit {rep}\n", "utf-8")
            edited.append(execute(new, env))
            print(f"rep {rep + 1}: cold {cold[-1][1]:.2f} s, edited {edited[-1][1]:.2f} s (figure)", flush=True)
    for index, what in ((1, "the figure's execution"), (0, "tensorviz execute")):
        before = statistics.median(c[index] for c in cold)
        after = statistics.median(e[index] for e in edited)
        print(f"\n{what} (median of {args.reps}):")
        print(f"  before issue 14, cold                  {before:6.2f} s")
        print(f"  first run on a fresh machine (pool on) {first[index]:6.2f} s")
        print(f"  edited, re-executed with the cache     {after:6.2f} s")
        print(f"  speed-up cold/edited                   {before / after:6.2f}x")


if __name__ == "__main__":
    main()
