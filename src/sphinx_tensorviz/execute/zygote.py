"""The parent of a warm worker pool: imports one framework once, then forks a clean child per job.

Started by :mod:`.pool` as ``python -m sphinx_tensorviz.execute.zygote BACKEND CONTROL_FD
LIFELINE_FD`` with the same minimal environment as a worker. It never runs lesson code
itself: it imports the framework (PyTorch, or JAX *without* starting a JAX backend, since
JAX does not survive ``fork`` once it has one), then waits. For each job the build sends,
over the control socket, the job's paths and three descriptors (a socket to answer on,
the job's lifeline and its output file); the zygote forks, and the child becomes an
ordinary worker (:func:`.worker.serve`): its own session, its job folder as working
directory, its own token and temp folder, the job's limits and lifeline. Every job starts
from the zygote's untouched memory, so no job sees the globals, modules, RNG state or
monkeypatches of another.

The child is not reaped when it exits: the zygote only reports its exit status
(``waitid(WNOWAIT)``), and reaps it once the build has killed whatever the job left and
closes the job's socket, so its pid (its session id) cannot be reused meanwhile. The
zygote exits, killing its children, when the build closes the control socket or the
lifeline (the build died), and is itself killed with the build (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any

from .processes import PR_SET_PDEATHSIG, prctl

#: what each backend's zygote imports before it forks (never a call that starts a device);
#: ``torch._inductor.config`` is what ``torch.use_deterministic_algorithms`` (every job's seeding)
#: imports, pulling in Dynamo and Inductor: seconds per job if each child imported it again
PRELOAD = {
    "torch": ("torch", "torch._inductor.config"),
    "jax": ("jax", "jax.numpy"),
    "numpy": (),
}
#: descriptors a job request carries: the socket to answer on, the job's lifeline, its output file
JOB_FDS = 3
_MESSAGE = 64 * 1024


def preload(backend: str) -> None:
    """Import the worker's code and the framework once, so forked jobs do not pay for it."""
    import importlib

    from . import worker  # noqa: F401 - numpy, the result conversion and the graph tracer

    for module in PRELOAD[backend]:
        importlib.import_module(module)


class Zygote:
    """The select loop of the pool's parent: start jobs, report exits, reap released ones."""

    def __init__(self, control: socket.socket, lifeline: int) -> None:
        self.control = control
        self.lifeline = lifeline
        self.jobs: dict[int, socket.socket] = {}  # child pid -> the build's socket for that job
        self.reported: set[int] = set()
        self.wake_read, self.wake_write = socket.socketpair()
        for end in (self.wake_read, self.wake_write):
            end.setblocking(False)

    def serve(self) -> None:
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
            return False  # the build is gone
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
            os.close(fds[2])
            return
        if pid == 0:
            self._child(request, conn, fds[1], fds[2])
        os.close(fds[1])
        os.close(fds[2])
        self.jobs[pid] = conn
        with contextlib.suppress(OSError):
            conn.send(json.dumps({"pid": pid}).encode())

    def _child(self, request: dict[str, Any], conn: socket.socket, lifeline_fd: int, log_fd: int) -> None:
        """In the forked child: drop everything of the zygote, become a worker, never return."""
        code = 70
        try:
            os.setsid()  # its own session and process group, as a fresh worker has
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for end in (self.control, self.wake_read, self.wake_write, conn, *self.jobs.values()):
                end.close()  # lesson code must not reach the zygote or another job's socket
            os.close(self.lifeline)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            os.close(null)
            os.close(log_fd)
            os.environ.update(request["environment"])  # the job's token and temp folder
            tempfile.tempdir = None  # gettempdir() reads TMPDIR again
            os.chdir(request["cwd"])
            from .worker import serve

            code = serve(Path(request["job"]), Path(request["result"]), lifeline_fd)
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

    def release(self, pid: int) -> None:
        """The build is done with this job (or gone): make sure the child is dead, and reap it."""
        conn = self.jobs.pop(pid)
        self.reported.discard(pid)
        conn.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def stop_all(self) -> None:
        for pid in list(self.jobs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            self.release(pid)


def main(argv: list[str]) -> int:
    backend, control_fd, lifeline_fd = argv[0], int(argv[1]), int(argv[2])
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the build; its children follow (see .lifeline)
    control = socket.socket(fileno=control_fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # import-time warnings belong to no job
            preload(backend)
    except BaseException as exc:  # noqa: BLE001 - the build falls back to one process per job
        with contextlib.suppress(OSError):
            control.send(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}).encode())
        return 1
    # fork() of a process with a framework's native threads: the child re-creates what it needs
    warnings.filterwarnings("ignore", message=".*use of fork\\(\\) may lead to deadlocks.*")
    Zygote(control, lifeline_fd).serve()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown: unloading a framework takes seconds and serves no one


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
