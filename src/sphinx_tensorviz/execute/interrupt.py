"""Ctrl-C during the execution phase: start nothing new, stop what runs, keep what finished.

Python turns the first SIGINT into ``KeyboardInterrupt`` in the build's main thread, which waits
for the jobs' threads. Left alone, the thread pool would still start every queued job before the
exception got out, and the results of the jobs that had finished would be lost with it. Instead
the runner triggers a :class:`Stop`: queued jobs are cancelled, every running worker is killed
(through the kill function it registered), and the outcomes that finished come back in
:class:`Interrupted`, which the execution phase stores before it lets the interrupt go on. The
signal handler itself is Python's own: nothing of the host process is changed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any


class Interrupted(KeyboardInterrupt):
    """The build was interrupted; ``outcomes`` are the jobs that finished before (by content hash)."""

    def __init__(self, outcomes: dict[str, Any]) -> None:
        super().__init__("interrupted")
        self.outcomes = outcomes


class Stop:
    """Shared by the jobs of one ``run_jobs`` call: once triggered, no job starts and running ones are killed."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._kills: dict[int, Callable[[], None]] = {}
        self._next = 0

    def is_set(self) -> bool:
        return self._event.is_set()

    @contextlib.contextmanager
    def watching(self, kill: Callable[[], None]) -> Iterator[None]:
        """While the block runs, ``trigger`` calls ``kill`` (at once, if it was triggered already)."""
        with self._lock:
            self._next += 1
            number = self._next
            self._kills[number] = kill
            late = self._event.is_set()
        if late:
            _quietly(kill)
        try:
            yield
        finally:
            with self._lock:
                self._kills.pop(number, None)

    def trigger(self) -> None:
        with self._lock:
            self._event.set()
            kills = list(self._kills.values())
        for kill in kills:
            _quietly(kill)


def _quietly(kill: Callable[[], None]) -> None:
    with contextlib.suppress(OSError):  # the process ended meanwhile
        kill()
