"""Executors and stores past one machine: local workers against Dask, a local folder against S3.

1. **Executors.** ``--figures`` small NumPy heatmap jobs (inline code, a 4 x 4 result each) run
   through the local executor (``tensorviz_workers = 2`` worker processes) and through a
   ``dask-local`` cluster of 2 process workers (cluster start included). Prints throughput
   (figures/s), per-figure overhead (wall time x workers / figures) and the Dask/local ratio.
2. **Stores.** A store of ``--artifacts`` valid artifacts (all unused by the project, the worst
   case for both commands) in a local folder and in an S3 bucket (moto's server on localhost, the
   same server the tests use): the time to list it, ``tensorviz status`` (reads every unused
   artifact to explain stale figures) and ``tensorviz gc`` (lists and describes every orphan), on
   the ``tests/roots/test-cli`` project. Prints S3/local ratios.

Usage: ``python bench/bench_remote.py [--figures 1000] [--artifacts 10000]``. The defaults are the
issue's sizes; on a shared two-core machine use e.g. ``--figures 200 --artifacts 2000``.

Last runs (shared 2-core machine, other agents' jobs running; ``--figures 100`` and
``--artifacts 10000``: 1,000 figures would hold both cores for minutes):

    local       100 figures in 14.9 s: 6.69 figures/s, 299 ms per figure per worker
    dask-local  100 figures in 22.0 s: 4.54 figures/s, 441 ms per figure per worker (cluster start included)
    dask-local / local wall time: 1.48
    push of 10000 artifacts to S3 (moto): 81.3 s
    list                 local 0.04 s   S3  2.11 s
    status (cold cache)  local 4.24 s   S3 77.27 s   S3/local 18.2
    status (warm cache)  local 3.88 s   S3  6.41 s   S3/local  1.7
    gc                   local 3.56 s   S3  9.18 s   S3/local  2.6

moto runs in this process (a thread sharing the GIL), so the S3 numbers measure moto as much as the
store; a real bucket answers GETs concurrently. Per-figure cost is dominated by starting a fresh
worker process and importing NumPy, the same for both executors.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from sphinx_tensorviz.cli import main as tensorviz  # noqa: E402
from sphinx_tensorviz.core.hashing import digest, sha256_text  # noqa: E402
from sphinx_tensorviz.execute.dask_executor import run_on_dask  # noqa: E402
from sphinx_tensorviz.execute.runner import RunSettings, run_jobs  # noqa: E402
from sphinx_tensorviz.store.artifacts import dump_json  # noqa: E402
from sphinx_tensorviz.store.remote import open_store  # noqa: E402

WORKERS = 2


def jobs(count: int, srcdir: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for i in range(count):
        code = f"import numpy as np\nresult = np.full((4, 4), {i}.0)\n"
        key = sha256_text(code)
        out[key] = {"directive": "tv-heatmap", "backend": "numpy", "seed": 0, "function": None, "inputs": [],
                    "options": {}, "device": "cpu", "entry": "<inline>", "srcdir": str(srcdir),
                    "files": {"<inline>": key}, "inlineCode": code, "inlineName": f"{srcdir / 'index.md'}:{i}",
                    "searchPath": [str(srcdir)]}
    return out


def bench_executors(figures: int, tmp: Path) -> None:
    srcdir = tmp / "src"
    srcdir.mkdir()
    work = jobs(figures, srcdir)
    settings = RunSettings(timeout=120, workers=WORKERS)
    rows = []
    for name, run in (("local", lambda: run_jobs(work, settings)),
                      ("dask-local", lambda: run_on_dask(work, settings, "dask-local"))):
        start = time.perf_counter()
        outcomes = run()
        wall = time.perf_counter() - start
        ok = sum(1 for o in outcomes.values() if o.ok)
        assert ok == figures, f"{name}: {figures - ok} of {figures} jobs failed: " + next(
            (str(o.result)[:300] for o in outcomes.values() if not o.ok), "")
        rows.append((name, wall))
        print(f"{name:11s} {figures} figures in {wall:7.1f} s: {figures / wall:6.2f} figures/s, "
              f"{wall * WORKERS / figures * 1000:6.0f} ms per figure per worker")
    print(f"dask-local / local wall time: {rows[1][1] / rows[0][1]:.2f}")


def template() -> dict[str, Any]:
    path = min((REPO / "lessons" / "tensorviz_artifacts").glob("*.json"), key=lambda p: p.stat().st_size)
    return json.loads(path.read_text("utf-8"))


def fill(count: int, folder: Path) -> None:
    """``count`` valid artifacts (distinct requests, so distinct names) written as a build would."""
    base = template()
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        artifact = json.loads(json.dumps(base))
        artifact["request"]["seed"] = 100_000 + i
        artifact["contentHash"] = digest(artifact["request"])
        (folder / f"{artifact['contentHash']}.json").write_text(dump_json(artifact), "utf-8")


def timed(*args: str) -> float:
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        tensorviz(list(args))
    return time.perf_counter() - start


def bench_stores(count: int, tmp: Path) -> None:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1")
    try:
        import boto3

        boto3.client("s3").create_bucket(Bucket="bench")
        local = tmp / "store"
        fill(count, local)
        project = tmp / "project"
        shutil.copytree(REPO / "tests" / "roots" / "test-cli", project)
        url = "s3://bench/store"
        start = time.perf_counter()
        assert tensorviz(["push", str(local), url]) == 0
        print(f"push of {count} artifacts to S3 (moto): {time.perf_counter() - start:.1f} s")
        results: dict[str, dict[str, float]] = {}
        for name, location in (("local", str(local)), ("s3", url)):
            store = open_store(location, tmp / f"cache-{name}")
            start = time.perf_counter()
            listed = len(store.artifact_hashes())
            assert listed == count, (name, listed)
            results[name] = {"list": time.perf_counter() - start}
            common = [str(project), "-D", f"tensorviz_artifact_store={location}",
                      "-D", f"tensorviz_cache_dir={tmp / f'cache-{name}'}"]
            results[name]["status (cold cache)"] = timed("status", *common)
            results[name]["status (warm cache)"] = timed("status", *common)
            results[name]["gc"] = timed("gc", *common)
        for step in results["local"]:
            print(f"{step:20s} local {results['local'][step]:7.2f} s   S3 {results['s3'][step]:7.2f} s   "
                  f"S3/local {results['s3'][step] / results['local'][step]:6.1f}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", type=int, default=1000)
    parser.add_argument("--artifacts", type=int, default=10_000)
    parser.add_argument("--only", choices=("executors", "stores"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tensorviz-bench-") as tmp:
        if args.only in (None, "executors"):
            bench_executors(args.figures, Path(tmp))
        if args.only in (None, "stores"):
            bench_stores(args.artifacts, Path(tmp))


if __name__ == "__main__":
    main()
