"""Files this machine keeps between builds, each a copy of what would be made again.

The drawing cache (:mod:`..render.cache`: drawings, figure parts) and the imports found in
model files (:mod:`..read.sources`) are kept the same way: one file per entry under a root in the
user's cache folder, written atomically (a reader sees the old entry or the new one), marked when
used and removed after :data:`MAX_AGE_DAYS` without use. Losing an entry only costs the time to
make it again.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

#: entries not used for this long are removed (used ones are touched at most once a day)
MAX_AGE_DAYS = 30
_DAY = 24 * 3600.0
#: a file in the cache folder whose time is that of the last pruning
PRUNED_STAMP = "last-pruned"


def replace_atomically(target: Path, text: str | bytes, mode: int | None = 0o644) -> None:
    """Write ``text`` (UTF-8 when a string) to ``target`` through a temporary file beside it, so a
    reader (or a parallel writer of the same bytes) sees the old file or the new one, never a part.
    ``mode``: the file's permissions (``None`` keeps the temporary file's owner-only 0600)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class KeptFiles:
    """Entries under ``root``, each ``folder/name``: read (and marked as used), written atomically,
    pruned when unused for :data:`MAX_AGE_DAYS` (looked over once a day)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        _prune_once(root)

    def text(self, key: str, variant: str, suffix: str, make: Callable[[], str]) -> str:
        """The text made from what ``key`` names in the way ``variant`` names (a recording and a
        renderer hash: an SVG, an outline; a file's text and the scanner: its imports): the kept
        one, else ``make()``'s, kept for next time."""
        name = f"{key[:32]}-{variant[:32]}.{suffix}"
        kept = self.read(key[:2], name)
        if kept is not None:
            try:
                return kept.decode("utf-8")
            except UnicodeDecodeError:
                pass
        made = make()
        self.write(key[:2], name, made)
        return made

    def read(self, folder: str, name: str) -> bytes | None:
        """The entry ``folder/name`` (marked as used), or ``None`` when it is absent, unreadable or not a
        regular file (the cache is the user's: a restored CI cache or other code may have put one there)."""
        path = self.root / folder / name
        try:  # the entry itself, a regular file: a FIFO would block, a link to /dev/zero never end
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    return None
                content = handle.read()
        except OSError:  # absent, unreadable, or a link (ELOOP)
            return None
        _keep(path)
        return content

    def write(self, folder: str, name: str, content: str | bytes) -> None:
        """Keep ``content`` as ``folder/name``, atomically; a cache that cannot be written costs a
        redraw next time, nothing else."""
        path = self.root / folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(path, content, mode=None)  # the user's own cache: owner-only, as it was
        except (OSError, ValueError):  # ValueError: text that cannot be written as UTF-8
            pass


def _keep(path: Path) -> None:
    """Mark an entry as used (its time), at most once a day, so pruning spares it."""
    try:
        if time.time() - path.stat().st_mtime > _DAY:
            os.utime(path)
    except OSError:
        pass


@cache
def _prune_once(root: Path) -> None:
    """Remove entries unused for :data:`MAX_AGE_DAYS` (and stray temporary files), at most once a day.

    Walking the cache stats every entry: tens of milliseconds on a course's cache, more as it
    grows, in every build. Entries are kept for weeks, so a daily walk is enough; the time of
    :data:`PRUNED_STAMP` says when the last one was.
    """
    stamp = root / PRUNED_STAMP
    try:
        if time.time() - stamp.stat().st_mtime < _DAY:
            return
    except OSError:
        pass  # never pruned (or unreadable): prune now
    limit = time.time() - MAX_AGE_DAYS * _DAY
    try:
        folders = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return
    for folder in folders:
        try:
            for entry in folder.iterdir():
                stale = entry.stat().st_mtime < limit
                if stale or (entry.suffix == ".tmp" and entry.stat().st_mtime < time.time() - _DAY):
                    entry.unlink(missing_ok=True)
        except OSError:
            continue
    try:
        stamp.touch()  # made, or its time set to now
    except OSError:  # a read-only cache: it is walked again next time, nothing else
        pass
