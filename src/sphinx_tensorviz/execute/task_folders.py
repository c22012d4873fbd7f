"""The private folder a Dask task runs its job in, and the ones that killed workers left behind.

A task removes its folder when it ends, but a Dask worker killed mid-job (the OOM killer, a lost
machine, lesson code that kills its own process) never gets to, and the folder, with the
lesson's files in it, stays in the machine's temporary folder for good. So each folder's name
carries the id of the process that made it, and every task that starts removes the folders of
processes that no longer exist: what a killed worker left lasts until the next task on that
machine. Folders of other users, and of processes still running, are left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "tensorviz-dask-"


@contextmanager
def task_folder() -> Iterator[Path]:
    """A new private folder for one task (removed when the block ends), after removing those of
    processes that are gone."""
    remove_abandoned(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-") as folder:
        yield Path(folder)


def remove_abandoned(root: Path) -> list[Path]:
    """Remove the task folders in ``root`` whose process has ended; returns them."""
    if os.name != "posix":  # no signal-0 probe for a process elsewhere: leave everything
        return []
    try:
        candidates = [entry for entry in root.iterdir() if entry.name.startswith(PREFIX)]
    except OSError:
        return []
    removed = []
    for entry in candidates:
        pid = _maker(entry.name)
        try:
            ours = entry.is_dir() and not entry.is_symlink() and entry.lstat().st_uid == os.getuid()
        except OSError:
            continue
        if pid is not None and ours and not _running(pid):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _maker(name: str) -> int | None:
    """The process id in ``tensorviz-dask-<pid>-<random>``; ``None`` for any other name."""
    pid, dash, rest = name[len(PREFIX):].partition("-")
    return int(pid) if pid.isdigit() and dash and rest else None


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no permission to ask: treat it as running
        return True
    return True
