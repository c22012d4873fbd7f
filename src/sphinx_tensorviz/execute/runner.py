"""Run jobs in fresh worker processes, in parallel, each under a timeout.

Threads only wait on child processes here; the lesson code itself never runs
in the calling (Sphinx) process. Each job gets a private temp folder (its working
directory, ``TMPDIR`` and the place of its job and result files) that is
removed when the job ends. The worker runs under a job guard (:mod:`.jobguard`)
that cleans up if the build dies. The job does not wait for the end of its
output (a child may keep it open): the result is read as soon as the worker
exits, and then everything the job started is killed (see
:mod:`.processes`). A worker that dies leaves no result file and becomes a
``crash``; one over a ``tensorviz_max_*`` limit becomes a ``limit`` failure.

Where it is safe (:func:`.pool.pool_problem`), workers are children forked by a warm
pool (:mod:`.pool`), whose parent guards them as the job guard does; everything above
applies to them alike.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from ..core.limits import LimitExceeded, Limits, check_data_size, check_result_size
from ..core.protocol import Failure, FailureKind, Job, Result, parse_result
from .caches import cache_environment, cache_mounts
from .determinism import worker_environment
from .interrupt import Interrupted, Stop
from .lesson_traceback import project_relative
from .pool import ForkedWorker, WorkerPool, open_pool
from .processes import (
    TOKEN_VARIABLE,
    adopting_orphans,
    job_processes,
    kill_all,
    kill_group,
    make_job_dir,
    remove_stale_job_dirs,
    sweep_children,
)
from .returned import read_returned
from .sandbox import sandbox_command
from .watching import TailReader, wait_for_exit

_TAIL_LINES = 12


@dataclass(frozen=True)
class RunSettings:
    timeout: float
    workers: int
    device: str = "cpu"
    memory_limit_mb: int = 0
    python: str = sys.executable
    limits: Limits = field(default_factory=Limits)
    sandbox: str = ""
    pool: bool = True  #: fork jobs from a warm pool where that is safe
    compilation_cache: bool = True  #: JAX's persistent compilation cache (see :mod:`.caches`)


def run_settings(conf: Any) -> RunSettings:
    """The run settings of a :class:`~sphinx_tensorviz.config.Settings`."""
    return RunSettings(conf.timeout, conf.workers, conf.device, conf.memory_limit_mb, conf.python,
                       Limits.from_settings(conf), conf.sandbox, conf.worker_pool, conf.compilation_cache)


@dataclass(frozen=True)
class Outcome:
    """What one job produced: the worker's result, or a failure the build found (timeout, crash)."""

    key: str
    result: Result
    started: float = 0.0  # wall-clock time (time.time()) of the job's start and end, 0 when unknown
    ended: float = 0.0
    interrupted: bool = False  #: stopped (or never started) by Ctrl-C: not the code's doing, never stored
    #: the files the result lists, read back from the job's folder (:mod:`.returned`): {name: bytes}
    files: Mapping[str, bytes] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.result.ok


def crashed(key: str, message: str) -> Outcome:
    """The outcome of a job that could not run at all (no interpreter, no cluster, no files)."""
    return Outcome(key, Failure(FailureKind.crash, message))


def run_jobs(
    jobs: dict[str, Job],
    settings: RunSettings,
    progress: Callable[[Iterable[Outcome], int], Iterator[Outcome]] | None = None,
) -> dict[str, Outcome]:
    """Run every job (keyed by content hash) and return the outcomes by key.

    While the jobs run this process adopts orphans of the workers; those still alive
    at the end (processes that escaped their job's session and cleared its token)
    are killed, so nothing a job started outlives the build. On Ctrl-C no further job
    starts, the running ones are killed, and :class:`.interrupt.Interrupted` carries
    the outcomes that had finished.
    """
    outcomes: dict[str, Outcome] = {}
    if not jobs:
        return outcomes
    remove_stale_job_dirs()
    stop = Stop()
    with adopting_orphans() as before:
        warm: WorkerPool | None = None
        threads = ThreadPoolExecutor(max_workers=max(1, settings.workers))
        try:
            warm = open_pool(list(jobs.values()), settings.pool, settings.sandbox,
                             settings.python, lambda token, folder: _environment(settings, token, folder),
                             settings.timeout)
            futures: list[Future[Outcome]] = [
                threads.submit(run_one, key, job, settings, warm, stop) for key, job in sorted(jobs.items())
            ]
            finished = (f.result() for f in as_completed(futures))
            try:
                for outcome in progress(finished, len(futures)) if progress else finished:
                    outcomes[outcome.key] = outcome
            except KeyboardInterrupt:
                raise Interrupted(_stop_all(stop, warm, threads, futures, outcomes)) from None
        finally:
            threads.shutdown(wait=True, cancel_futures=True)
            if warm is not None:
                warm.close()
            sweep_children(keep=before)  # orphans adopted while jobs ran, until none is left
    return outcomes


def _stop_all(stop: Stop, warm: WorkerPool | None, threads: ThreadPoolExecutor, futures: list[Future[Outcome]],
              outcomes: dict[str, Outcome]) -> dict[str, Outcome]:
    """The first Ctrl-C: cancel the jobs that wait, kill those that run, and return what finished."""
    stop.trigger()
    for future in futures:
        future.cancel()
    if warm is not None:
        warm.interrupt()
    threads.shutdown(wait=True)  # quick: every running worker has just been killed
    for future in futures:
        if future.done() and not future.cancelled() and future.exception() is None:
            outcome = future.result()
            if not outcome.interrupted:
                outcomes.setdefault(outcome.key, outcome)
    return outcomes


#: Variables a worker inherits: what Python, the frameworks and the network stack need, and no more.
#: Lesson code is untrusted: tokens and secrets of the build (CI, Read the Docs) stay behind, and so
#: do ``PYTHON*`` settings that run code (``PYTHONSTARTUP``) and ``TENSORVIZ_*`` values of the build.
_PASSED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "SHELL",
           "SYSTEMROOT", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "SSL_CERT_FILE", "SSL_CERT_DIR",
           "REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
           "PYTHONPATH", "PYTHONUTF8", "PYTHONIOENCODING", "ATEN_CPU_CAPABILITY")
_PASSED_PREFIXES = ("LC_", "CONDA", "OPENBLAS_", "MKL_", "OMP_", "CUDA", "NVIDIA_", "XLA_", "JAX_", "TORCH")


def passed_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in _PASSED or k.startswith(_PASSED_PREFIXES)}


def run_one(key: str, job: Job, settings: RunSettings, warm: WorkerPool | None = None,
            stop: Stop | None = None) -> Outcome:
    """Run one job in its own temp folder, which is removed on every path out of here."""
    stop = stop or Stop()
    if stop.is_set():
        return _interrupted(key)
    started = time.time()
    job_dir = make_job_dir(key)
    try:
        outcome = _run_in(job_dir, key, job, settings, warm, stop)
        result, files = read_returned(job_dir, outcome.result)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)
    return Outcome(outcome.key, _published(result, job.srcdir), started, time.time(), outcome.interrupted, files)


def _published(result: Result, srcdir: str) -> Result:
    """A failure as its error box and committed record show it: the project's folder taken out of what
    the build adds (a crashed worker's output names the files that warned), like the worker's own."""
    if not isinstance(result, Failure):
        return result
    return replace(result, message=project_relative(result.message, srcdir),
                   traceback=project_relative(result.traceback, srcdir), stderr=project_relative(result.stderr, srcdir))


def _interrupted(key: str) -> Outcome:
    return Outcome(key, Failure(FailureKind.crash, "the build was interrupted"), interrupted=True)


class _Guarded:
    """A worker started under its job guard; the same operations as :class:`.pool.ForkedWorker`."""

    def __init__(self, process: subprocess.Popen[bytes], lifeline: int) -> None:
        self.process = process
        self.pid = process.pid
        self.output: IO[bytes] = process.stdout  # type: ignore[assignment]
        self.lifeline = lifeline  #: the write end of the guard's pipe from the build

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def wait(self, timeout: float) -> bool:
        return wait_for_exit(self.process, timeout)

    def release(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.lifeline)


def _run_in(job_dir: Path, key: str, job: Job, settings: RunSettings, warm: WorkerPool | None,
            stop: Stop) -> Outcome:
    if shutil.which(settings.python) is None:
        return crashed(key, f"cannot start the worker {settings.python!r} (tensorviz_python): no such executable")
    for private in ("work", "tmp", "home"):
        (job_dir / private).mkdir()
    job = replace(job, memory_limit_mb=settings.memory_limit_mb, limits=settings.limits.to_job())
    (job_dir / "job.json").write_text(json.dumps(job.to_json()), "utf-8")
    token = secrets.token_hex(16)
    if warm is not None:
        worker = warm.start(job.backend, {
            "job": str(job_dir / "job.json"), "result": str(job_dir / "result.json"), "cwd": str(job_dir / "work"),
            "token": token, "jobDir": str(job_dir), "environment": _private(token, job_dir)})
        if worker is not None:
            with stop.watching(lambda: os.killpg(worker.pid, signal.SIGKILL)):
                returncode, output = _watch(worker, token, settings)
            if not (worker.orphaned and not (job_dir / "result.json").exists()):
                return _finished(key, job_dir, returncode, output, settings, stop)
            # the pool's parent died under this job (another job may have killed it): not this
            # job's doing, so it runs again, alone; a crash must cost one figure only
    if stop.is_set():
        return _interrupted(key)
    started = _start_guarded(key, job_dir, job, settings, token)
    if isinstance(started, Outcome):
        return started
    # SIGTERM: the guard kills every process of the job, as when the build dies
    with stop.watching(lambda: started.process.send_signal(signal.SIGTERM)):
        returncode, output = _watch(started, token, settings)
    return _finished(key, job_dir, returncode, output, settings, stop)


def _finished(key: str, job_dir: Path, returncode: int | None, output: bytes, settings: RunSettings,
              stop: Stop) -> Outcome:
    """The job's outcome; a job without a valid result once Ctrl-C came was stopped by it, not failed."""
    outcome = _outcome(key, job_dir / "result.json", returncode, output, settings)
    return replace(outcome, interrupted=True) if stop.is_set() and not outcome.ok else outcome


def _watch(worker: _Guarded | ForkedWorker, token: str, settings: RunSettings) -> tuple[int | None, bytes]:
    """Wait for the worker (``None``: it ran out of time), then kill whatever the job left."""
    reader = TailReader(worker.output)
    pid = worker.pid
    try:
        finished = worker.wait(settings.timeout)
    finally:
        # the worker is dead or still holds its pid (not reaped yet): nothing it started may stay
        kill_group(pid)
        strays = lambda: [p for p in job_processes(pid, token) if p != pid]  # noqa: E731
        kill_all(strays(), again=strays)
        worker.release()
    return (worker.returncode if finished else None), reader.tail()


def _start_guarded(key: str, job_dir: Path, job: Job, settings: RunSettings,
                   token: str) -> _Guarded | Outcome:
    """A fresh worker under its job guard, or the ``crash`` outcome when it cannot start."""
    lifeline_read, lifeline_write = os.pipe()  # only this process holds the write end
    command, env = _guarded_command(job_dir, job, settings, token, lifeline_read)
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
            cwd=job_dir / "work", start_new_session=True, pass_fds=(lifeline_read,),
        )
    except OSError as exc:
        os.close(lifeline_write)
        return crashed(key, f"cannot start the job guard {sys.executable!r}: {exc}")
    finally:
        os.close(lifeline_read)
    return _Guarded(process, lifeline_write)


def _guarded_command(job_dir: Path, job: Job, settings: RunSettings, token: str,
                     lifeline_fd: int) -> tuple[list[str], dict[str, str]]:
    """The command line (job guard, maybe bwrap, worker) and the environment of one job."""
    env = _environment(settings, token, job_dir)
    command = [settings.python, "-m", "sphinx_tensorviz.execute.worker.job", str(job_dir / "job.json"),
               str(job_dir / "result.json")]
    if settings.sandbox:
        env["HOME"] = str(job_dir / "home")
        srcdir = Path(job.srcdir) if job.srcdir else None
        inherited = tuple(sorted(passed_environment().items()))  # the interpreter reports its sys.path with it
        command = sandbox_command(command, job_dir, srcdir, settings.python, inherited,
                                  cache_mounts(settings.compilation_cache), settings.memory_limit_mb)
    # the guard (this interpreter, our code only) stands between the build and the worker
    guard = [sys.executable, "-m", "sphinx_tensorviz.execute.jobguard", str(job_dir), str(lifeline_fd), "--"]
    return [*guard, *command], env


def _environment(settings: RunSettings, token: str, folder: Path) -> dict[str, str]:
    """A worker's whole environment: what it inherits, what makes it deterministic, the caches, and
    its own token and temp folder (for a pool's parent: the pool's token and folder)."""
    passed = passed_environment()
    return {**passed, **worker_environment(settings.device, inherited_xla_flags=passed.get("XLA_FLAGS", "")),
            **cache_environment(settings.compilation_cache, settings.sandbox), **_private(token, folder)}


def _private(token: str, folder: Path) -> dict[str, str]:
    """The variables that differ between jobs: the job's token and temp folder."""
    return {TOKEN_VARIABLE: token, "TMPDIR": str(folder / "tmp"), "TEMP": str(folder / "tmp"),
            "TMP": str(folder / "tmp")}


def _outcome(key: str, result_path: Path, returncode: int | None, output: bytes, settings: RunSettings) -> Outcome:
    """The job's outcome from its result file (``returncode`` ``None``: it ran out of time)."""
    if returncode is None:
        return Outcome(key, Failure(
            FailureKind.timeout, f"still running after {settings.timeout:g} s (tensorviz_timeout); the worker was stopped",
            _tail(output), timeout=settings.timeout))
    try:
        check_result_size(result_path.stat().st_size, settings.limits)
        result = parse_result(json.loads(result_path.read_text("utf-8")))
        if result.ok:  # the worker checked this too, but it ran untrusted code
            check_data_size(result.data, settings.limits)
    except LimitExceeded as exc:
        return Outcome(key, Failure(FailureKind.limit, str(exc), limits=_exceeded(settings.limits, exc.name)))
    except (OSError, ValueError, RecursionError):  # no result file, not JSON (or nested past the parser's
        # depth: lesson code can write the file), or not a result the protocol knows
        return Outcome(key, Failure(FailureKind.crash, _exit_reason(returncode), _tail(output)))
    if not result.ok and result.kind is FailureKind.limit:  # recorded, so raising the limit runs it again
        result = replace(result, limits=_exceeded(settings.limits, result.limit))
    text = output.decode("utf-8", "replace")
    if text.strip():
        result = replace(result, stderr=text[-4000:])
    return Outcome(key, result)


def _exceeded(limits: Limits, name: Any) -> dict[str, Any]:
    """{limit: value} of the limit a result exceeded, as recorded with the failure."""
    current = limits.to_job()
    return {name: current[name]} if name in current else {}


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
