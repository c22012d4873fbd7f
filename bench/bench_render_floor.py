"""How close to the plain pages a fresh-output build of the course could get, had every figure
been made already (issue 14's "fresh output <= 1.2x the same pages without the extension").

Three projects, each built cold (fresh output and doctree folders, every artifact committed, the
machine's drawing cache warm) with ``-b html -q`` in a fresh process, alternating:

* **tensorviz**: ``lessons/`` as it is;
* **ready-made**: the same, through ``floor_sphinx.py``, which replaces every node the extension
  leaves for the page writer with ready-made HTML of about the same total size, neither translated
  nor indexed: what a cache of translated figure HTML would leave to do;
* **plain**: the pages without the extension (as ``bench_build.py`` makes them).

Prints the medians and fastest runs, the ratios to plain, and each project's page HTML bytes.
The gap tensorviz - ready-made is the making of the figures' nodes, their translation and the
indexing of their words, and the page files; ready-made - plain is what no cache can remove.

Usage: ``python bench/bench_render_floor.py [--reps 7]``; about a minute on two cores.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import build, clean, make_projects  # noqa: E402

HERE = Path(__file__).resolve().parent


def html_bytes(project: Path) -> int:
    return sum(p.stat().st_size for p in (project / "_build" / "html").glob("*.html"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="timed cold builds of each (default 7)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tv-floor-") as tmp:
        viz, plain = make_projects(Path(tmp))
        runs = {"tensorviz": (viz, None), "ready-made": (viz, HERE / "floor_sphinx.py"), "plain": (plain, None)}
        times: dict[str, list[float]] = {name: [] for name in runs}
        sizes: dict[str, int] = {}
        for _ in range(args.reps + 1):  # the first round primes the caches and is not counted
            for name, (project, runner) in runs.items():
                clean(project)
                seconds, _cpu, _rss = build(project, runner)
                times[name].append(seconds)
                sizes[name] = html_bytes(project)
    plain_median = statistics.median(times["plain"][1:])
    plain_fastest = min(times["plain"][1:])
    print(f"cold builds of lessons/, {args.reps} runs each (after one priming round)")
    print(f"{'build':<11} {'median s':>9} {'ratio':>6} {'fastest s':>10} {'ratio':>6} {'page HTML':>12}")
    for name in runs:
        median, fastest = statistics.median(times[name][1:]), min(times[name][1:])
        print(f"{name:<11} {median:>9.3f} {median / plain_median:>6.2f} {fastest:>10.3f} "
              f"{fastest / plain_fastest:>6.2f} {sizes[name]:>12,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
