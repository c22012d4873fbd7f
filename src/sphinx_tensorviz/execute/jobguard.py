"""The job guard: a small process between the build and each worker, so nothing outlives the job.

Started by the runner as ``python -m sphinx_tensorviz.execute.jobguard JOB_DIR FD -- COMMAND...``
in a new session; ``COMMAND`` is the worker (or bubblewrap running it). The guard runs no lesson
code, so it always responds, however the lesson code behaves (a C loop holding the GIL, signal
handlers replaced, the worker's own modules patched). It

- is a child subreaper: processes the job orphans (double forks) become its children, and it
  reaps those that exit while the job runs (a fork chain would fill the pid table with zombies);
- watches the build through a pipe (``FD``) whose write end only the build holds, and gets
  ``SIGTERM`` if its parent dies (``PR_SET_PDEATHSIG``): when the build is gone (``kill -9``
  included), it kills every process of the job, removes the job folder and exits;
- when the worker exits, kills whatever the job left running (its children until none is left,
  so a fork chain ends too: :func:`.processes.sweep_children`), then exits the way the worker did
  (same status, same signal), so the build reports the worker's fate.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from .processes import (
    PR_SET_CHILD_SUBREAPER,
    PR_SET_PDEATHSIG,
    TOKEN_VARIABLE,
    children_of,
    job_processes,
    kill_all,
    prctl,
    reap_zombie_children,
    sweep_children,
)

_done = threading.Lock()


def job_left_overs(token: str) -> list[int]:
    """Every process of this job but the guard: its session, its token, and orphans adopted here."""
    me = os.getpid()
    return sorted(set(job_processes(me, token)) | set(children_of(me)))


def end_job(token: str) -> None:
    """Kill every process of the job: by its marks, then every child until none is left."""
    kill_all(job_left_overs(token), again=lambda: job_left_overs(token))
    sweep_children()


def abandon(job_dir: Path, token: str, *_: Any) -> None:
    """The build is gone: stop everything of the job, remove its folder, exit at once."""
    if not _done.acquire(blocking=False):
        return
    end_job(token)
    shutil.rmtree(job_dir, ignore_errors=True)
    os._exit(70)


def _watch(fd: int, job_dir: Path, token: str) -> None:
    try:
        while os.read(fd, 1):
            pass
    except OSError:
        pass
    abandon(job_dir, token)  # end of file: the build (the only writer) has exited


def _wait(worker: subprocess.Popen[bytes]) -> int:
    """The worker's exit status; meanwhile, reap what it orphaned and has exited."""
    while True:
        try:
            return worker.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            reap_zombie_children(keep={worker.pid})


def main(argv: list[str]) -> int:
    job_dir, fd, command = Path(argv[0]), int(argv[1]), argv[3:]
    token = os.environ.get(TOKEN_VARIABLE, "")
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGTERM, lambda *_: abandon(job_dir, token))
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    threading.Thread(target=_watch, args=(fd, job_dir, token), daemon=True).start()
    try:
        worker = subprocess.Popen(command)
    except OSError as exc:
        print(f"cannot start the worker {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    status = _wait(worker)
    if not _done.acquire(blocking=False):  # the build died meanwhile: abandon() is exiting
        threading.Event().wait()
    end_job(token)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    if poller.poll(0):  # readable (or hung up) means end of file: the build died meanwhile
        shutil.rmtree(job_dir, ignore_errors=True)
    if status < 0:  # killed by a signal: die the same way, so the build reports it the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
