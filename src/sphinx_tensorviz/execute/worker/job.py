"""The worker: a fresh Python process that runs one directive's lesson code.

Started by :mod:`.runner`, through the job guard (:mod:`.jobguard`), as ``python -m
sphinx_tensorviz.execute.worker.job JOB RESULT``, or forked by a warm pool's parent
(:mod:`.zygote`), which has imported the framework but never started a device. Never forked
from Sphinx (CUDA and JAX do not survive ``fork`` once started); it dies with its guard or
parent. It reads the
job JSON, seeds everything, runs the code with stdout captured, converts the
return value into artifact ``data`` and writes the result JSON. Anything the
code raises becomes an error result; if the process dies instead, the runner
notices the missing result file.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import resource
import signal
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...core.kinds import WORKER_ENTRY
from ...core.limits import LimitExceeded, Limits, check_result_size
from ...core.protocol import Failure, FailureKind, Job, ProtocolError, Result, Success
from ...store.artifacts import dump_json
from ..determinism import describe_environment, seed_everything
from ..lesson_traceback import lesson_error
from ..processes import PR_SET_PDEATHSIG, prctl
from .loader import BadResult, import_file, run_inline
from .returned_files import RETURNED_FOLDER, write_returned_files
from .tail_buffer import TailBuffer

Runner = Callable[[types.ModuleType, Job], dict[str, Any]]


def runner_of(job: Job) -> Runner:
    """The function the job's ``runner`` names (its kind's worker entry, copied into the job by the
    build), imported only now: the worker never imports a figure kind it does not run."""
    module, _, name = job.runner.partition(":")
    try:
        function = getattr(importlib.import_module(module), name, None)
    except ImportError as exc:  # not the lesson's error: where the kind is, or what it needs, is not here
        raise BadResult(f"the worker cannot import the figure kind's entry {job.runner} ({exc}); a kind from "
                        "another extension must be in the course's folder (beside conf.py, or in a folder of "
                        "it such as _ext/) or installed where the workers run (tensorviz_python, each Dask "
                        "worker), with what it imports") from None
    if not getattr(function, WORKER_ENTRY, False):
        raise BadResult(f"the job's runner {job.runner} is not a figure kind's worker entry (@worker_entry)")
    return function  # type: ignore[return-value]


def load_module(job: Job) -> types.ModuleType:
    """Import the lesson file, or run the inline body, as a fresh module."""
    sys.path[:0] = job.search_path
    if job.inline_code is not None:
        return run_inline(job.inline_code, str(job.inline_name))
    entry = Path(str(job.entry_path))
    return import_file(entry, entry.stem)


def run_job(job: Job, files_dir: Path | None = None) -> Result:
    """Run a job and return its result (never raises for lesson errors). Files the entry returns
    (``{"files": {name: bytes}}``) are written into ``files_dir``, beside the result."""
    limits = Limits.from_job(job.limits)
    stdout = TailBuffer(limits.stdout_chars)  # printing 50 MB keeps only the tail
    notes = lambda: tuple(n for n in [stdout.truncation_note()] if n)  # noqa: E731
    try:
        seed_everything(job.backend, job.seed)
        with contextlib.redirect_stdout(stdout):
            module = load_module(job)
            produced = runner_of(job)(module, job)
        returned = produced.pop("files", None) or {}
        check_result_size(_stored_size(produced) + len(stdout.getvalue()), limits)
        files = write_returned_files(returned, files_dir)
    except LimitExceeded as exc:
        return Failure(FailureKind.limit, str(exc), stdout=stdout.getvalue(), notes=notes(), limit=exc.name)
    except BadResult as exc:
        return Failure(FailureKind.bad_result, str(exc), stdout=stdout.getvalue(), notes=notes())
    except BaseException as exc:  # noqa: BLE001 - any lesson error is reported, not raised
        error = lesson_error(exc, job.srcdir, job.inline_name)
        return Failure(FailureKind.execution, error.message, error.traceback, stdout.getvalue(), notes())
    checks = produced.get("checks")
    return Success(produced["data"], describe_environment(job.backend), stdout.getvalue(),
                   None if checks is None else tuple(checks), notes(), files=files)


def _stored_size(produced: dict[str, Any]) -> int:
    """Bytes ``produced`` takes in the pretty-printed artifact (0 if it cannot be stored: ``main`` says why)."""
    try:
        return len(dump_json(produced).encode("utf-8"))
    except (TypeError, ValueError):
        return 0


def _limit_memory(megabytes: int) -> None:
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def main(argv: list[str]) -> int:
    return serve(Path(argv[0]), Path(argv[1]))


def serve(job_path: Path, result_path: Path) -> int:
    """Run the job at ``job_path`` and write its result: the same code for a fresh worker (under its
    job guard) and for a child forked by a warm pool's parent (:mod:`.zygote`), which guards it."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the job guard (or the pool's parent) is gone: so is the job
    _prefer_as_oom_victim()
    try:
        job = Job.from_json(json.loads(job_path.read_text("utf-8")))
    except (ProtocolError, ValueError) as exc:  # the build wrote it: a bug of ours, said plainly
        result: Result = Failure(FailureKind.bad_result, f"the worker cannot read its job: {exc}")
    else:
        _limit_memory(job.memory_limit_mb)
        result = run_job(job, result_path.parent / RETURNED_FOLDER)
    document = {**result.to_json(), "execution": {"peakMemoryMb": peak_memory_mb()}}
    try:
        text = json.dumps(document, allow_nan=False)
    except (TypeError, ValueError) as exc:  # e.g. a check's description that is not text
        text = json.dumps(Failure(FailureKind.bad_result, f"the result cannot be stored: {exc}",
                                  stdout=str(document.get("stdout", ""))).to_json())
    result_path.write_text(text, "utf-8")
    return 0


def peak_memory_mb() -> float:
    """Peak resident memory of this process in MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def _prefer_as_oom_victim() -> None:
    """Out of memory, the kernel should kill this job, not the build, its guard or a pool's parent."""
    with contextlib.suppress(OSError):
        Path("/proc/self/oom_score_adj").write_text("500")


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # the result is written: skip the interpreter's teardown (seconds with a framework loaded)
