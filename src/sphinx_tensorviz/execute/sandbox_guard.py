"""Host side of a sandboxed job: run bubblewrap, and remove the job folder if the build died meanwhile.

Started by the runner as ``python -m sphinx_tensorviz.execute.sandbox_guard JOB_DIR FD -- bwrap ...``.
Inside the sandbox the job folder is a mount point, which the worker can empty but not remove
when the build dies; this process sits outside, so once bubblewrap exits it checks the build's
lifeline pipe (``FD``, end of file: the build is gone) and removes the folder. While the build
lives the folder is left for it to read the result from. Exits like bubblewrap did.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path


def build_gone(fd: int) -> bool:
    """``True`` when the write end of the lifeline is closed (only the build holds it)."""
    try:
        os.set_blocking(fd, False)
        return os.read(fd, 1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def main(argv: list[str]) -> int:
    job_dir, fd, command = Path(argv[0]), int(argv[1]), argv[3:]
    status = subprocess.call(command, pass_fds=(fd,))
    if build_gone(fd):
        shutil.rmtree(job_dir, ignore_errors=True)
    if status < 0:  # killed by a signal: die the same way, so the build reports it the same way
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
