"""The files beside the pages are written by one thread of their own, so drawing never waits on the disk.

Why: a fresh output folder of the course gets about 180 small files from the extension (downloads,
a big graph's module files, thumbnails). Creating a file is kernel work that costs 0.1 to 0.8 ms
on a busy virtual machine's ext4: up to a tenth of a cached build, spent while the build's one
Python thread could draw the next page. File calls release the GIL, so one writer thread does that
work beside it (on a second core when there is one).

What stays as it was:

* **Order.** Every write of the output folder goes through the one thread, in the order asked, and
  the checks a writer makes first ("is this file already there, with these bytes?") run on that
  thread too: they see what every earlier write left, as when the writes were made in place.
* **The end of the build.** :func:`setup_background_writes` opens the writer when the builder is
  set up and closes it at ``build-finished`` (after the other handlers, which may still write): by
  the time ``sphinx-build`` returns, every file is there. Outside a build (the CLI, tests drawing a
  figure) nothing is open and each write is made at once, in the caller's thread.
* **Forks.** ``sphinx-build -j`` and worker pools fork this process. Before a fork the writer
  waits for its queue to empty, and its thread has ended (it lives only while there is work), so
  the child is a copy of a one-thread process; it writes in place.
* **Quick hand-overs.** Each file is several system calls, and after each one the writer needs the
  GIL back. Python hands it over only when the holder has run for the switch interval (5 ms by
  default), so with the build's thread busy drawing, the writer spent most of its time waiting:
  its writes took twice their kernel time, and the build waited 0.1 to 0.15 s at the end for
  the rest. While the writer has work, the interval is 0.1 ms (:data:`SWITCH_INTERVAL`); the
  build's thread loses only the hand-overs, and the interval is put back when the queue is empty.
* **Errors.** A write that fails (a read-only or full output folder) is a ``tensorviz.output``
  warning when the writer closes, naming the file: the build finishes, and fails under ``-W``.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from ..warnings_ import Subtype, warn

#: the switch interval while the writer has work (see the module's docstring)
SWITCH_INTERVAL = 0.0001


class _Writer:
    """The writes handed over, in order, and the thread that works through them.

    The thread runs only while there is work: it ends when the queue is empty and the next write
    starts another. So a fork (which waits for the queue first) finds no thread besides the
    caller's, and an idle build holds none.
    """

    def __init__(self) -> None:
        self.jobs: deque[tuple[Path, Callable[[], None]]] = deque()
        self.failed: list[tuple[Path, Exception]] = []
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None
        self.interval_before: float | None = None  #: the switch interval to put back, while lowered

    def submit(self, target: Path, job: Callable[[], None]) -> None:
        with self.lock:
            self.jobs.append((target, job))
            if self.thread is None:
                self._lower_switch_interval()
                self.thread = threading.Thread(target=self._work, name="tensorviz-writes")
                self.thread.start()

    def _work(self) -> None:
        while True:
            with self.lock:
                if not self.jobs:
                    self.thread = None
                    self._restore_switch_interval()
                    return
                target, job = self.jobs.popleft()
            try:
                job()
            except Exception as error:  # reported when the writer closes, with the file
                with self.lock:
                    self.failed.append((target, error))

    def _lower_switch_interval(self) -> None:
        before = sys.getswitchinterval()
        if before > SWITCH_INTERVAL:
            self.interval_before = before
            sys.setswitchinterval(SWITCH_INTERVAL)

    def _restore_switch_interval(self) -> None:
        """Put the interval back, unless something else has set another meanwhile."""
        # (Python keeps the interval in whole microseconds: compared as such)
        if self.interval_before is not None and round(sys.getswitchinterval() * 1e6) == round(SWITCH_INTERVAL * 1e6):
            sys.setswitchinterval(self.interval_before)
        self.interval_before = None

    def wait(self) -> None:
        """Wait until every write handed over so far is made.

        Only the thread that hands writes over calls this, so once the worker has ended nothing is
        left in the queue."""
        with self.lock:
            thread = self.thread
        if thread is not None:
            thread.join()

    def settle(self) -> list[tuple[Path, Exception]]:
        """:meth:`wait`, then the writes that failed, with their errors."""
        self.wait()
        with self.lock:
            failed, self.failed = self.failed, []
        return failed


#: the writer of the build in progress in this process (``None``: write in place)
_WRITER: _Writer | None = None


def write(target: Path, job: Callable[[], None]) -> None:
    """Run ``job`` (which writes ``target``, and only files of the output folder) on the writer
    thread after every write asked before it; at once when no build has opened the writer."""
    writer = _WRITER
    if writer is None:
        job()
    else:
        writer.submit(target, job)


def open_writes() -> None:
    """Start handing writes to a thread (a writer already open stays: one per process)."""
    global _WRITER
    if _WRITER is None:
        _WRITER = _Writer()


def close_writes() -> list[tuple[Path, Exception]]:
    """Wait for every write and return the ones that failed; later writes are made in place."""
    global _WRITER
    writer, _WRITER = _WRITER, None
    return writer.settle() if writer is not None else []


def _before_fork() -> None:
    if _WRITER is not None:
        _WRITER.wait()  # its failures stay with it, reported when the parent closes it


def _in_child() -> None:
    """A forked child writes in place: the build's writer belongs to the parent."""
    global _WRITER
    _WRITER = None


os.register_at_fork(before=_before_fork, after_in_child=_in_child)


def _opened(app: Sphinx) -> None:
    open_writes()


def _closed(app: Sphinx, exception: BaseException | None) -> None:
    for target, error in close_writes():
        shown = Path(error.filename) if isinstance(error, OSError) and error.filename else target
        try:
            shown = shown.resolve().relative_to(Path(app.outdir).resolve())
        except ValueError:
            pass
        warn(f"could not write {shown} in the output folder {app.outdir}: {error}; the page links to "
             "it, so make the folder writable (or give it room) and build again", Subtype.output)


def setup_background_writes(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _opened)
    app.connect("build-finished", _closed, priority=900)  # after the handlers that still write
    return {}
