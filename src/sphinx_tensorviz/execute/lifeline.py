"""Inside the worker: never outlive the build, and leave nothing behind when it dies.

The build hands the worker the read end of a pipe whose write end only the build
holds. A thread blocks on it; end-of-file means the build is gone (``kill -9``
included), and the worker then kills what the lesson code started, removes its own
temp folder and exits. ``PR_SET_PDEATHSIG`` sends ``SIGTERM`` as a second signal of
the same event, and where the pipe is unusable (lesson code closed it) the thread
watches the parent pid instead. The worker is also a child subreaper, so processes
its code orphans stay below it, where the build can find them.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

from .processes import PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG, TOKEN_VARIABLE, job_processes, kill_all, prctl

_done = threading.Lock()
_token = ""


def hold(job_dir: Path, pipe_fd: int | None) -> None:
    """Start watching the build; call first thing in the worker, before any lesson code runs."""
    global _token
    _token = os.environ.get(TOKEN_VARIABLE, "")  # read now: lesson code may change the environment
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    if prctl(PR_SET_PDEATHSIG, signal.SIGTERM):
        signal.signal(signal.SIGTERM, lambda *_: abandon(job_dir))
    parent = os.getppid()  # the build, or bubblewrap's init inside the sandbox
    threading.Thread(target=_watch, args=(job_dir, pipe_fd, parent), name="tensorviz-lifeline", daemon=True).start()


def _watch(job_dir: Path, pipe_fd: int | None, parent: int) -> None:
    if pipe_fd is not None:
        try:
            while os.read(pipe_fd, 1):
                pass
            abandon(job_dir)  # end of file: the build (the only writer) has exited
        except OSError:
            pass  # the lesson code closed or replaced the descriptor: fall back to polling
    while os.getppid() == parent:
        time.sleep(0.5)
    abandon(job_dir)


def abandon(job_dir: Path, *_: Any) -> None:
    """The build is gone: stop everything this job started, remove its folder, exit at once."""
    if not _done.acquire(blocking=False):
        return
    me = os.getpid()
    kill_all(job_processes(me, _token), again=lambda: job_processes(me, _token))
    shutil.rmtree(job_dir, ignore_errors=True)
    os._exit(70)
