"""Warm worker pools: one forking parent per framework, for the length of one ``run_jobs`` call.

A fresh worker pays for ``import torch`` (1 to 3 s) or ``import jax`` on every figure. A
pool starts one :mod:`.zygote` per backend the build's jobs use; it imports the framework
once and forks a clean child per job, which runs exactly the code of a fresh worker
(:func:`.worker.serve`) in its own session, job folder and limits; the zygote guards its
children as the job guard (:mod:`.jobguard`) guards a fresh worker. The runner treats a
forked child like a spawned one (:class:`ForkedWorker` has the same operations), so
timeouts, output, the killing of everything a job started, result checks and the job
folder's removal are the same code for both.

The pool is used only where it keeps every guarantee of a fresh worker (see
:func:`pool_problem`); elsewhere, and for a backend whose parent fails to start, each job
runs in a process of its own, as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from sphinx.util import logging

from ..core.protocol import Job
from .processes import job_processes, kill_all, kill_group, make_job_dir
from .worker.zygote import LIBRARIES, PRELOAD

logger = logging.getLogger("sphinx_tensorviz")
_MESSAGE = 64 * 1024
_GRACE = 5.0  #: seconds a closed pool's parent has to exit before it is killed
#: the parent's environment for a pool token and its folder (the runner's worker environment)
EnvironmentFor = Callable[[str, Path], dict[str, str]]


def pool_problem(enabled: bool, sandbox: str) -> str | None:
    """Why jobs run one process each instead of in a warm pool (``None``: the pool is used)."""
    if not enabled:
        return "tensorviz_worker_pool is off"
    if sandbox:
        return (f"tensorviz_sandbox = {sandbox!r}: bubblewrap wraps a new process, not a forked child, "
                "so every job starts its own sandboxed process")
    if not sys.platform.startswith("linux") or not hasattr(socket, "SOCK_SEQPACKET") or not hasattr(os, "fork"):
        return "the warm pool needs Linux (fork, descriptor passing and /proc to find a job's processes)"
    return None


def open_pool(jobs: list[Job], enabled: bool, sandbox: str, python: str, environment_for: EnvironmentFor,
              startup_timeout: float) -> WorkerPool | None:
    """Warm parents for the backends of ``jobs``, or ``None`` where each job must run alone (said at ``-v``)."""
    problem = pool_problem(enabled, sandbox)
    if problem:
        if enabled:
            logger.verbose("tensorviz: one worker process per job: %s", problem)
        return None
    if shutil.which(python) is None:
        return None  # each job reports the missing interpreter
    return WorkerPool(python, jobs, environment_for, startup_timeout)


def libraries_used(jobs: list[Job], backend: str) -> set[str]:
    """The known heavy libraries (:data:`.zygote.LIBRARIES`) that the code of ``backend``'s jobs
    imports directly (the inline body or the entry file), so its parent can import them once."""
    found: set[str] = set()
    for job in jobs:
        if job.backend != backend:
            continue
        code = job.inline_code
        if code is None and job.entry_path:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                code = Path(job.entry_path).read_text("utf-8")
        found |= {name for name in LIBRARIES.get(backend, ())
                  if re.search(rf"^\s*(?:import|from)\s+{name}\b", code or "", re.M)}
    return found


class ForkedWorker:
    """A job's child in a pool, as the runner sees it: a pid to wait for, kill and release."""

    def __init__(self, pid: int, conn: socket.socket, output: IO[bytes]) -> None:
        self.pid = pid
        self.conn = conn
        self.output = output  #: the read end of the child's stdout and stderr
        self.returncode: int | None = None
        self.orphaned = False  #: the pool's parent died under the job (maybe killed by another job)

    def wait(self, timeout: float) -> bool:
        """``True`` once the child exited (still unreaped), ``False`` when ``timeout`` passed first."""
        self.conn.settimeout(max(timeout, 0.001))
        try:
            message = self.conn.recv(_MESSAGE)
        except (TimeoutError, socket.timeout):
            return False
        except OSError:
            message = b""
        # an empty message: the pool's parent died, and its children with it (PR_SET_PDEATHSIG)
        self.orphaned = not message
        self.returncode = int(json.loads(message)["exit"]) if message else -signal.SIGKILL
        return True

    def release(self) -> None:
        """Done with the job: the parent makes sure the child is dead and reaps it."""
        self.conn.close()


class _Parent:
    """One backend's zygote: started at once, waited for (``ready``) by the first job that needs it."""

    def __init__(self, python: str, backend: str, environment_for: EnvironmentFor, startup_timeout: float,
                 libraries: set[str], runners: set[str]) -> None:
        self.backend = backend
        self.startup_timeout = startup_timeout
        self.folder = make_job_dir(f"pool-{backend}")
        for private in ("work", "tmp"):
            (self.folder / private).mkdir()
        self.token = secrets.token_hex(16)
        self.lock = threading.Lock()
        self.ready: bool | None = None
        self.forked = 0
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        life_read, self.life_write = os.pipe()  # only the build holds the write end
        try:
            with open(self.folder / "output.log", "wb") as log:
                self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
                    [python, "-m", "sphinx_tensorviz.execute.worker.zygote", backend, str(theirs.fileno()), str(life_read),
                     str(self.folder), ",".join(sorted(libraries)), ",".join(sorted(runners))],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env=environment_for(self.token, self.folder), cwd=self.folder / "work",
                    start_new_session=True, pass_fds=(theirs.fileno(), life_read),
                )
        except OSError as exc:
            self.process, self.ready = None, False
            logger.verbose("tensorviz: no warm %s pool (%s); one process per job", backend, exc)
        finally:
            theirs.close()
            os.close(life_read)

    def _wait_ready(self) -> bool:
        if self.ready is None:
            self.control.settimeout(self.startup_timeout)
            try:
                message = self.control.recv(_MESSAGE)
            except OSError:  # a timeout included
                message = b""
            answer = json.loads(message) if message else {"error": "its parent process did not start"}
            self.ready = answer.get("ready") is True
            if not self.ready:
                logger.verbose("tensorviz: no warm %s pool (%s); one process per job", self.backend, answer.get("error"))
        return self.ready

    def start(self, request: dict[str, Any]) -> ForkedWorker | None:
        """Fork a child for one job; ``None``: the pool cannot, run it alone."""
        with self.lock:
            if not self._wait_ready():
                return None
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            output_read, output_write = os.pipe()
            try:
                socket.send_fds(self.control, [json.dumps(request).encode()], [theirs.fileno(), output_write])
            except OSError:
                self.ready = False
                ours.close()
                os.close(output_read)
                logger.verbose("tensorviz: the warm %s pool ended; one process per job from now on", self.backend)
                return None
            finally:
                theirs.close()
                os.close(output_write)  # the child holds it now: end of file when it (and its children) end
        ours.settimeout(self.startup_timeout)
        try:
            answer = json.loads(ours.recv(_MESSAGE) or b"{}")
        except OSError:
            answer = {}
        if "pid" not in answer:
            ours.close()
            os.close(output_read)
            return None
        self.forked += 1
        return ForkedWorker(int(answer["pid"]), ours, os.fdopen(output_read, "rb"))

    def close(self) -> None:
        """Stop the parent and anything left of its jobs; remove its folder; report its peak memory."""
        self.control.close()  # the parent kills its children and exits
        os.close(self.life_write)
        if self.process is not None:
            pid, token = self.process.pid, self.token
            deadline = time.monotonic() + _GRACE
            while time.monotonic() < deadline and os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                time.sleep(0.02)  # exited or not, it stays unreaped: its pid (session) is still its own
            kill_group(pid)
            strays = lambda: [p for p in job_processes(pid, token) if p != pid]  # noqa: E731
            kill_all(strays(), again=strays)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _, status, usage = os.wait4(pid, 0)
            self.process.returncode = os.waitstatus_to_exitcode(status)
            logger.verbose("tensorviz: warm %s pool: %d job%s forked; its parent's peak memory %.0f MiB",
                           self.backend, self.forked, "" if self.forked == 1 else "s", usage.ru_maxrss / 1024)
        shutil.rmtree(self.folder, ignore_errors=True)


class WorkerPool:
    """The warm parents of one ``run_jobs`` call, one per backend its jobs use."""

    def __init__(self, python: str, jobs: list[Job], environment_for: EnvironmentFor,
                 startup_timeout: float) -> None:
        backends = {job.backend for job in jobs}
        self.parents = {b: _Parent(python, b, environment_for, startup_timeout, libraries_used(jobs, b),
                                   {job.runner for job in jobs if job.backend == b})
                        for b in sorted(backends) if b in PRELOAD}

    def start(self, backend: str, request: dict[str, Any]) -> ForkedWorker | None:
        """A forked child running ``request`` (job and result paths, working folder, token, job folder,
        environment), or ``None`` where the job must run in a process of its own."""
        parent = self.parents.get(backend)
        return parent.start(request) if parent is not None else None

    def interrupt(self) -> None:
        """Ctrl-C: every parent kills its children and ends; a job waiting for one runs nowhere."""
        for parent in self.parents.values():
            with contextlib.suppress(OSError):
                parent.control.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        for parent in self.parents.values():
            parent.close()

