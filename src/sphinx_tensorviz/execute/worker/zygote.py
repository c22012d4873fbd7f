"""The parent of a warm worker pool: imports one framework once, then forks a clean child per job.

Started by :mod:`.pool` as ``python -m sphinx_tensorviz.execute.worker.zygote BACKEND CONTROL_FD
LIFELINE_FD FOLDER [LIBRARIES [RUNNERS]]`` with the same minimal environment as a worker. It never runs
lesson code itself: it imports the framework (PyTorch, or JAX *without* starting a JAX
backend, since JAX does not survive ``fork`` once it has one) and the known libraries the jobs'
code imports (``transformers``, ``flax``...), then waits. For each job the build
sends, over the control socket, the job's paths, token and folder and two descriptors (a
socket to answer on and the write end of the job's output pipe); the zygote forks, and the
child becomes an ordinary worker (:func:`.job.serve`): its own session, its job folder as
working directory, its own token and temp folder, the job's limits. Every job starts from
the zygote's untouched memory, so no job sees the globals, modules, RNG state or
monkeypatches of another.

For its children the zygote is what the job guard (:mod:`.jobguard`) is for a fresh
worker, and for the same reason: it runs no lesson code, so it always responds.

- The child is not reaped when it exits: the zygote reports its exit status
  (``waitid(WNOWAIT)``) and reaps it once the build has killed whatever the job left and
  closed the job's socket, so its pid (its session id) cannot be reused meanwhile.
- Each child is a child subreaper, so its orphans stay below it while it runs; when it has
  exited they come to the zygote (a subreaper too), which kills them.
- When the build is gone (the lifeline pipe closes, or ``PR_SET_PDEATHSIG`` sends
  ``SIGTERM``), the zygote kills every process of every job, removes their folders and its
  own, and exits; its children die with it (``PR_SET_PDEATHSIG``). When the build closes
  the control socket (the pool is done), it kills its children and exits.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..processes import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_PDEATHSIG,
    children_of,
    job_processes,
    kill_all,
    prctl,
    sweep_children,
)

#: what each backend's zygote imports before it forks (never a call that starts a device)
PRELOAD = {
    "torch": ("torch",),
    "jax": ("jax", "jax.numpy"),
    "numpy": (),
}
#: libraries a zygote also imports when some job's code imports them (seconds each, paid once)
LIBRARIES = {
    "torch": ("transformers", "torchvision"),
    "jax": ("flax", "equinox", "optax"),
    "numpy": (),
}
#: descriptors a job request carries: the socket to answer on, the write end of the job's output pipe
JOB_FDS = 2
_MESSAGE = 64 * 1024


def preload(backend: str, libraries: Sequence[str], runners: Sequence[str] = ()) -> None:
    """Import the worker's code, the framework, the worker entries (``module``s of ``module:function``)
    and the ``libraries`` the jobs use once, so forked jobs do not pay for them (an entry or a library
    that fails to import is left to the job that needs it: a kind of the course's own may live beside
    its lessons, which only the job puts on the path)."""
    import importlib

    from . import job  # noqa: F401 - the protocol and the lesson-code loader

    for runner in runners:  # each figure kind's worker entry (numpy, the result checks, the tracer)
        with contextlib.suppress(ImportError):
            importlib.import_module(runner.partition(":")[0])
    for module in PRELOAD[backend]:
        importlib.import_module(module)
    for library in libraries:
        if library in LIBRARIES[backend]:
            with contextlib.suppress(Exception):
                importlib.import_module(library)


class Zygote:
    """The select loop of the pool's parent: start jobs, report exits, reap released ones."""

    def __init__(self, control: socket.socket, lifeline: int, folder: Path) -> None:
        self.control = control
        self.lifeline = lifeline
        self.folder = folder
        self.jobs: dict[int, socket.socket] = {}  # child pid -> the build's socket for that job
        self.marks: dict[int, tuple[str, Path]] = {}  # child pid -> its job's token and folder
        self.reported: set[int] = set()
        self.wake_read, self.wake_write = socket.socketpair()
        for end in (self.wake_read, self.wake_write):
            end.setblocking(False)

    def serve(self) -> None:
        signal.signal(signal.SIGTERM, lambda *_: self.abandon())
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # the build died: abandon() like a lifeline's end
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_write.fileno())  # a child's exit wakes select()
        try:
            self.control.send(json.dumps({"ready": True, "pid": os.getpid()}).encode())
            while self._step():
                pass
        finally:
            self.stop_all()

    def _step(self) -> bool:
        readable, _, _ = select.select([self.control, self.lifeline, self.wake_read, *self.jobs.values()],
                                       [], [], 1.0)
        if self.lifeline in readable and not os.read(self.lifeline, 1):
            self.abandon()  # the build is gone
        if self.wake_read in readable:
            with contextlib.suppress(BlockingIOError):
                while self.wake_read.recv(512):
                    pass
        if self.control in readable:
            message, fds, _, _ = socket.recv_fds(self.control, _MESSAGE, JOB_FDS)
            if not message:
                return False  # the build closed the pool
            self.start(json.loads(message), fds)
        self.report_exits()
        self.kill_orphans()  # a job's orphans come here only once its child has exited: the job is over
        for pid, conn in list(self.jobs.items()):
            if conn in readable:
                self.release(pid)
        return True

    def start(self, request: dict[str, Any], fds: list[int]) -> None:
        """Fork one job's child and tell the build its pid."""
        if len(fds) != JOB_FDS:
            for fd in fds:
                os.close(fd)
            return
        conn = socket.socket(fileno=fds[0])
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError as exc:
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"error": f"cannot fork a worker: {exc}"}).encode())
            conn.close()
            os.close(fds[1])
            return
        if pid == 0:
            self._child(request, conn, fds[1])
        os.close(fds[1])
        self.jobs[pid] = conn
        self.marks[pid] = (str(request["token"]), Path(request["jobDir"]))
        with contextlib.suppress(OSError):
            conn.send(json.dumps({"pid": pid}).encode())

    def _child(self, request: dict[str, Any], conn: socket.socket, output_fd: int) -> None:
        """In the forked child: drop everything of the zygote, become a worker, never return."""
        code = 70
        try:
            os.setsid()  # its own session and process group, as a fresh worker has
            prctl(PR_SET_CHILD_SUBREAPER, 1)  # its orphans stay below it while it runs
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGCHLD, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            for end in (self.control, self.wake_read, self.wake_write, conn, *self.jobs.values()):
                end.close()  # lesson code must not reach the zygote or another job's socket
            os.close(self.lifeline)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(output_fd, 1)
            os.dup2(output_fd, 2)
            os.close(null)
            os.close(output_fd)
            os.environ.update(request["environment"])  # the job's token and temp folder
            tempfile.tempdir = None  # gettempdir() reads TMPDIR again
            os.chdir(request["cwd"])
            from .job import serve

            code = serve(Path(request["job"]), Path(request["result"]))
        except BaseException:  # noqa: BLE001 - reported in the output; the missing result is a crash
            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)

    def report_exits(self) -> None:
        """Tell the build which children exited, leaving them unreaped (their pid stays theirs)."""
        for pid, conn in self.jobs.items():
            if pid in self.reported:
                continue
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None:
                continue
            code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            self.reported.add(pid)
            with contextlib.suppress(OSError):
                conn.send(json.dumps({"exit": code}).encode())

    def kill_orphans(self) -> None:
        """Kill and reap processes adopted from jobs that ended (their child, the subreaper, exited),
        until none is left: a fork chain's next link comes here too."""
        sweep_children(keep=self.jobs)

    def abandon(self) -> None:
        """The build is gone: stop every process of every job, remove their folders and ours, exit now."""
        me = os.getpid()
        every = lambda: sorted({p for pid, (token, _) in self.marks.items()  # noqa: E731
                                for p in job_processes(pid, token)} | set(children_of(me)) - {me})
        kill_all(every(), again=every)
        sweep_children()
        for _, folder in self.marks.values():
            shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(self.folder, ignore_errors=True)
        os._exit(70)

    def release(self, pid: int) -> None:
        """The build is done with this job: make sure the child is dead, and reap it."""
        conn = self.jobs.pop(pid)
        self.marks.pop(pid, None)
        self.reported.discard(pid)
        conn.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        self.kill_orphans()  # what the job orphaned came to us when its child (their subreaper) ended

    def stop_all(self) -> None:
        for pid in list(self.jobs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            self.release(pid)


def main(argv: list[str]) -> int:
    backend, control_fd, lifeline_fd, folder = argv[0], int(argv[1]), int(argv[2]), Path(argv[3])
    libraries = [name for name in (argv[4] if len(argv) > 4 else "").split(",") if name]
    runners = [name for name in (argv[5] if len(argv) > 5 else "").split(",") if name]
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # while it imports: dies with the build (serve() cleans up instead)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    control = socket.socket(fileno=control_fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # import-time warnings belong to no job
            preload(backend, libraries, runners)
    except BaseException as exc:  # noqa: BLE001 - the build falls back to one process per job
        with contextlib.suppress(OSError):
            control.send(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}).encode())
        return 1
    # fork() of a process with a framework's native threads: the child re-creates what it needs
    warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks.*")
    Zygote(control, lifeline_fd, folder).serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: unloading a framework takes seconds and serves no one


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
