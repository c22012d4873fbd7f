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


#: Variables a worker inherits: what Python, the frameworks and the network stack need, and no more.
#: Lesson code is untrusted: tokens and secrets of the build (CI, Read the Docs) stay behind.
_PASSED = ("ATEN_CPU_CAPABILITY", "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "SHELL",
           "SYSTEMROOT", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "SSL_CERT_FILE", "SSL_CERT_DIR",
           "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_PASSED_PREFIXES = ("LC_", "PYTHON", "CONDA", "OPENBLAS_", "MKL_", "OMP_", "CUDA", "NVIDIA_", "XLA_", "JAX_",
                    "TORCH", "TENSORVIZ_")


def passed_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in _PASSED or k.startswith(_PASSED_PREFIXES)}


def run_one(key: str, job: dict[str, Any], settings: RunSettings, tmp: Path) -> Outcome:
    job_path, result_path = tmp / f"{key}.job.json", tmp / f"{key}.result.json"
    job = {**job, "memoryLimitMb": settings.memory_limit_mb}
    job_path.write_text(json.dumps(job), "utf-8")
    passed = passed_environment()
    env = {**passed, **worker_environment(settings.device, inherited_xla_flags=passed.get("XLA_FLAGS", ""))}
    try:
        process = subprocess.Popen(
            [settings.python, "-m", "sphinx_tensorviz.execute.worker", str(job_path), str(result_path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=job.get("srcdir") or None,
            start_new_session=True,  # its own process group, so a timeout kills children too
        )
    except OSError as exc:
        return Outcome(key, {"ok": False, "subtype": "crash",
                             "message": f"cannot start the worker {settings.python!r} (tensorviz_python): {exc}"})
    try:
        output, _ = process.communicate(timeout=settings.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        try:
            output, _ = process.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a grandchild in its own session still holds the pipe
            process.kill()
            output = b""
        return Outcome(key, {
            "ok": False,
            "subtype": "timeout",
            "message": f"still running after {settings.timeout:g} s (tensorviz_timeout); the worker was stopped",
            "traceback": _tail(output),
            "timeout": settings.timeout,
        })
    text = output.decode("utf-8", "replace")
    try:
        result = _checked_result(json.loads(result_path.read_text("utf-8")))
    except (OSError, json.JSONDecodeError, ValueError):
        return Outcome(key, {
            "ok": False,
            "subtype": "crash",
            "message": _exit_reason(process.returncode),
            "traceback": _tail(output),
        })
    if text.strip():
        result["stderr"] = text[-4000:]
    return Outcome(key, result)


def _checked_result(result: Any) -> dict[str, Any]:
    """The result file is written by a process that ran untrusted code: accept only its known shape."""
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        raise ValueError("not a result document")
    if result["ok"]:
        data, environment = result.get("data"), result.get("environment")
        if not isinstance(data, dict) or data.get("kind") not in ("heatmap", "graph", "sweep-check"):
            raise ValueError("no data of a known kind")
        if not isinstance(environment, dict) or not all(isinstance(environment.get(k), str)
                                                        for k in ("backend", "python", "framework")):
            raise ValueError("no environment")
        if not isinstance(result.get("stdout", ""), str) or not isinstance(result.get("checks", []), list):
            raise ValueError("stdout or checks of the wrong type")
    else:
        subtype = result.get("subtype")
        if subtype not in ("execution", "bad_result") or not isinstance(result.get("message"), str):
            raise ValueError("not a failure the worker reports")
        for name in ("traceback", "stdout"):
            if not isinstance(result.get(name, ""), str):
                raise ValueError(f"{name} is not text")
    return result


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (the system may have run out of memory)" if name == "SIGKILL" else ""
        return f"the worker process was killed by {name}{hint} before it returned a result"
    return f"the worker process exited with status {code} before it returned a result"


def _tail(output: bytes | None) -> str:
    lines = (output or b"").decode("utf-8", "replace").rstrip().splitlines()
    return "\n".join(lines[-_TAIL_LINES:])
