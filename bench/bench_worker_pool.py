"""Warm worker pool against one process per job: one page with 20 small PyTorch heatmaps, cold.

Each run builds the page from an empty artifact store and a fresh output folder
(``python -m sphinx -b html -q`` in a new process), once with ``tensorviz_worker_pool = True``
(the default: one parent imports torch, each figure is a forked child) and once with
``False`` (a fresh interpreter imports torch for every figure). Runs alternate, so load from
other processes falls on both alike. Prints the median of each and the ratio pool/process
(issue 14: the page should no longer pay ``import torch`` 20 times).

Usage: ``python bench/bench_worker_pool.py [--reps 3] [--figures 20]``; about a minute per rep
on two cores.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from projects import build, fresh, heatmaps_project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--figures", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tv-bench-pool-") as tmp:
        projects = {
            "pool": heatmaps_project(Path(tmp) / "pool", args.figures, "tensorviz_worker_pool = True\n"),
            "process": heatmaps_project(Path(tmp) / "process", args.figures, "tensorviz_worker_pool = False\n"),
        }
        times: dict[str, list[float]] = {name: [] for name in projects}
        for rep in range(args.reps):
            for name, project in projects.items():
                out = Path(tmp) / f"out-{name}"
                fresh(project / "tensorviz_artifacts", out)
                times[name].append(build(project, out))
                print(f"rep {rep + 1}: {name:8s} {times[name][-1]:6.2f} s", flush=True)
    pool, process = statistics.median(times["pool"]), statistics.median(times["process"])
    print(f"\n{args.figures} PyTorch heatmaps on one page, cold (median of {args.reps}):")
    print(f"  one process per job  {process:6.2f} s")
    print(f"  warm pool            {pool:6.2f} s")
    print(f"  ratio pool/process   {pool / process:6.2f}")


if __name__ == "__main__":
    main()
