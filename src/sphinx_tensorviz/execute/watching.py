"""Waiting for a worker and reading its output, so that neither can hold a job.

The job guard is waited for without being reaped, so its pid (and session id) stays its own
while the job's other processes are looked up and killed; the worker's output is read as it
comes and only its end is kept, and the job never waits for the end of that output (a child
of the lesson may keep it open).
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from typing import IO

_TAIL_BYTES = 64 * 1024


def wait_for_exit(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until the job guard exits (``True``) or ``timeout`` passes, without reaping it.

    Not reaping keeps its pid (and so its session id) from being reused while the
    job's other processes are looked up and killed. A pidfd wakes us the moment it
    exits; without one (not Linux 5.3+), poll.
    """
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            poller = select.poll()  # not select.select: a busy build may hold descriptors above 1024
            poller.register(pidfd, select.POLLIN)
            return bool(poller.poll(timeout * 1000))
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            if os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                return True
        except (AttributeError, ChildProcessError):  # no waitid either: wait and reap
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
                return True
            except subprocess.TimeoutExpired:
                return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


class TailReader(threading.Thread):
    """Reads the worker's output as it comes, keeping only the last :data:`_TAIL_BYTES`.

    The job never waits for the end of this output: a child that keeps it open would
    hold the job. The result is read when the worker exits, and once everything the
    job started is killed the pipe closes and this thread ends.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(name="tensorviz-output", daemon=True)
        self.stream = stream
        self.kept = bytearray()
        self.start()

    def run(self) -> None:
        for chunk in iter(lambda: self.stream.read1(_TAIL_BYTES), b""):
            self.kept += chunk
            del self.kept[:-_TAIL_BYTES]

    def tail(self, wait: float = 2.0) -> bytes:
        self.join(wait)
        if not self.is_alive():
            self.stream.close()
        return bytes(self.kept)
