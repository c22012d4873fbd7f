"""Find and stop every process a job started, and the temp folders of builds that died.

Lesson code may start processes that leave the worker's process group or even its
session (``setsid``), or that double-fork so their parent is gone. Three marks find
them all on Linux, read from ``/proc``:

- the session: the worker leads its own session, and a child stays in it unless it
  calls ``setsid``;
- an environment token: every worker gets ``TENSORVIZ_JOB=<token>``, which children
  inherit unless they clear their environment;
- the parent: the build process is a *child subreaper* while jobs run
  (``PR_SET_CHILD_SUBREAPER``), so an orphan from a worker is re-parented to the build,
  not to init, and the build sees it as its own unexpected child.

A process that forks and exits in a loop (a *fork chain*, calling ``setsid`` each time) changes
its pid, session and parent faster than a search by those marks can follow it. What it cannot
change is that its orphans go to the nearest child subreaper above it: the job guard, the pool's
parent, or the build. So each subreaper, when a job ends, kills and reaps its own children until
it has none left (:func:`sweep_children`); a link forked meanwhile comes back to it, and the next
round takes it. In the sandbox a PID namespace holds the job as well.

Elsewhere (no ``/proc``) only the process group is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TOKEN_VARIABLE = "TENSORVIZ_JOB"
#: ``tensorviz-<build pid>-<job>-<random>``: the owning build's pid, so stale folders can be found
TEMP_PREFIX = "tensorviz-job-"
_TEMP_NAME = re.compile(rf"^{re.escape(TEMP_PREFIX)}(\d+)-")
_PROC = Path("/proc")


def prctl(option: int, value: int) -> bool:
    """``prctl(2)`` through libc; ``False`` where it does not exist or fails (not Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def adopting_orphans() -> Iterator[set[int]]:
    """Make this process a child subreaper while the block runs; yields the children it had before."""
    before = set(children_of(os.getpid()))
    enabled = prctl(PR_SET_CHILD_SUBREAPER, 1)
    try:
        yield before
    finally:
        if enabled:
            prctl(PR_SET_CHILD_SUBREAPER, 0)


def job_processes(session: int, token: str) -> list[int]:
    """Live processes of one job: in the worker's session or carrying its token (never this one)."""
    me = os.getpid()
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    found = []
    for pid, (_, sid) in _table().items():
        if pid == me:
            continue
        if sid == session or marker in _environ(pid):
            found.append(pid)
    return found


def kill_all(find: Iterable[int] | None = None, again: Callable[[], Iterable[int]] | None = None,
             rounds: int = 5) -> None:
    """SIGKILL ``find`` and reap those that are our children; repeat with ``again()`` until none are left.

    Killing a process can orphan its children (re-parented to us or to init), so the
    search runs again a few times.
    """
    pids = list(find or [])
    for _ in range(rounds):
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap(pids)
        pids = list(again()) if again else []


#: seconds a subreaper keeps killing its children: a fork chain is caught in a few rounds
SWEEP_SECONDS = 10.0


def sweep_children(keep: Iterable[int] = (), seconds: float = SWEEP_SECONDS) -> bool:
    """Kill and reap every child of this process but ``keep`` until none is left (``True``), or
    ``seconds`` pass (``False``).

    A child killed after it forked leaves its own child to us (we are its subreaper), so the
    next round finds that one; rounds take a millisecond or two, so a fork chain that moves to
    a new process on every fork is caught in a few.
    """
    kept = set(keep)
    deadline = time.monotonic() + seconds
    while True:
        table = _table()
        me = os.getpid()
        found = [pid for pid, (ppid, _) in table.items() if ppid == me and pid not in kept]
        if not found:
            return True
        if time.monotonic() >= deadline:
            return False
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for pid in found:  # zombies (a link that already exited) and those the kill has ended
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def reap_zombie_children(keep: Iterable[int] = ()) -> None:
    """Reap children of this process (but ``keep``) that have exited: a fork chain that runs while its
    job does would otherwise fill the pid table with the zombies of its links."""
    kept, me = set(keep), os.getpid()
    for pid, (ppid, sid) in _table().items():
        if ppid == me and sid == -1 and pid not in kept:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _reap(pids: list[int], wait: float = 2.0) -> None:
    """Collect the exit status of those ``pids`` that are our children, so none stays a zombie."""
    me = os.getpid()
    deadline = time.monotonic() + wait
    table = _table()  # once: a table per pid made this quadratic, minutes for a fork chain's zombies
    pending = {pid for pid in pids if table.get(pid, (None,))[0] == me}
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pending.discard(pid)
        if pending:
            time.sleep(0.01)


def _table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, session id) for every process we can see (empty without /proc)."""
    table: dict[int, tuple[int, int]] = {}
    if not _PROC.is_dir():
        return table
    for entry in os.scandir(_PROC):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 3 and fields[0] != "Z":
            table[int(entry.name)] = (int(fields[1]), int(fields[3]))
        elif len(fields) > 3:  # a zombie: still a child to reap, but in no session any more
            table[int(entry.name)] = (int(fields[1]), -1)
    return table


def children_of(parent: int) -> list[int]:
    return [pid for pid, (ppid, _) in _table().items() if ppid == parent]


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def make_job_dir(key: str) -> Path:
    """A private temp folder for one job, named after this build's pid (see :func:`remove_stale_job_dirs`)."""
    return Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-{key[:12]}-"))


def remove_stale_job_dirs() -> None:
    """Remove job folders left by builds that no longer run (killed with ``kill -9``, power loss)."""
    root = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            match = _TEMP_NAME.match(entry.name)
            if match and entry.is_dir() and not alive(int(match.group(1))):
                shutil.rmtree(entry, ignore_errors=True)
