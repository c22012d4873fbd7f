"""Run jobs in fresh worker processes, in parallel, each under a timeout.

Threads only wait on child processes here; the lesson code itself never runs
in the calling (Sphinx) process. A worker that hangs is killed with its whole
process group; one that dies leaves no result file and becomes a ``crash``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .determinism import worker_environment

_TAIL_LINES = 12


@dataclass(frozen=True)
class RunSettings:
    timeout: float
    workers: int
    device: str = "cpu"
    memory_limit_mb: int = 0
    python: str = sys.executable


@dataclass(frozen=True)
class Outcome:
    """What one job produced: a result document from the worker, or a failure made here."""

    key: str
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))


def run_jobs(
    jobs: dict[str, dict[str, Any]],
    settings: RunSettings,
    progress: Callable[[Iterable[Outcome], int], Iterator[Outcome]] | None = None,
) -> dict[str, Outcome]:
    """Run every job (keyed by content hash) and return the outcomes by key."""
    outcomes: dict[str, Outcome] = {}
    if not jobs:
        return outcomes
    with tempfile.TemporaryDirectory(prefix="tensorviz-") as tmp, ThreadPoolExecutor(
        max_workers=max(1, settings.workers)
    ) as pool:
        futures: list[Future[Outcome]] = [
            pool.submit(run_one, key, job, settings, Path(tmp)) for key, job in sorted(jobs.items())
        ]
        finished = (f.result() for f in as_completed(futures))
        for outcome in progress(finished, len(futures)) if progress else finished:
            outcomes[outcome.key] = outcome
    return outcomes


def run_one(key: str, job: dict[str, Any], settings: RunSettings, tmp: Path) -> Outcome:
    job_path, result_path = tmp / f"{key}.job.json", tmp / f"{key}.result.json"
    job = {**job, "memoryLimitMb": settings.memory_limit_mb}
    job_path.write_text(json.dumps(job), "utf-8")
    env = {**os.environ, **worker_environment(settings.device)}
    process = subprocess.Popen(
        [settings.python, "-m", "sphinx_tensorviz.execute.worker", str(job_path), str(result_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=job.get("srcdir") or None,
        start_new_session=True,  # its own process group, so a timeout kills children too
    )
    try:
        output, _ = process.communicate(timeout=settings.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        output, _ = process.communicate()
        return Outcome(key, {
            "ok": False,
            "subtype": "timeout",
            "message": f"still running after {settings.timeout:g} s (tensorviz_timeout); the worker was stopped",
            "traceback": _tail(output),
            "timeout": settings.timeout,
        })
    text = output.decode("utf-8", "replace")
    try:
        result = json.loads(result_path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError):
        return Outcome(key, {
            "ok": False,
            "subtype": "crash",
            "message": _exit_reason(process.returncode),
            "traceback": _tail(output),
        })
    if text.strip():
        result["stderr"] = text[-4000:]
    return Outcome(key, result)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _exit_reason(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        hint = " (the system may have run out of memory)" if name == "SIGKILL" else ""
        return f"the worker process was killed by {name}{hint} before it returned a result"
    return f"the worker process exited with status {code} before it returned a result"


def _tail(output: bytes | None) -> str:
    lines = (output or b"").decode("utf-8", "replace").rstrip().splitlines()
    return "\n".join(lines[-_TAIL_LINES:])
