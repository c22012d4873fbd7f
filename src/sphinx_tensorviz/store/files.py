"""Reading a file of the store without trusting what is at its path.

The store is a folder anyone can put things in: a cloned course (git keeps symbolic links), a
shared checkout, lesson code running as your user. A name in it may be a symbolic link to
``/dev/zero`` (read whole, it never ends), a FIFO (opened for reading, it waits for a writer for
ever) or a sparse file of a terabyte. So every read here looks at the entry itself (``lstat``,
then ``O_NOFOLLOW | O_NONBLOCK``, checked again on the open descriptor), refuses anything that is
not a regular file, and reads at most ``limit + 1`` bytes, so a larger file is refused, not read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..core.words import plural

#: what to call an entry that is not a regular file, by its ``S_IFMT``
_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFDIR: "a folder"}


class Refused(OSError):
    """The entry is not a regular file, or is larger than the limit; ``reason`` says which, for messages."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.reason = reason


def kind_of(mode: int) -> str:
    """What an entry of this ``st_mode`` is, in words."""
    return _KINDS.get(stat.S_IFMT(mode), "a special file")


def _not_regular(path: Path, mode: int) -> Refused:
    return Refused(path, f"is {kind_of(mode)}, not a regular file; it was not read")


def is_regular(path: Path) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def is_folder(path: Path) -> bool:
    """Whether ``path`` itself (not what a link points to) is a folder."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def is_private_regular(path: Path) -> bool:
    """Whether ``path`` itself is a regular file with no other name (one hard link): a file the store
    may append to or lock. A hard link made by lesson code (as the user) to a file elsewhere is a
    regular file too, and writing into it would write into that file."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and found.st_nlink == 1


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises :class:`FileNotFoundError` when nothing is there, :class:`Refused` for anything that is not
    a regular file or holds more than ``limit`` bytes, and :class:`OSError` when it cannot be read.
    """
    mode = os.lstat(path).st_mode  # FileNotFoundError passes through
    if not stat.S_ISREG(mode):
        raise _not_regular(path, mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # replaced by a link since the lstat
            raise _not_regular(path, stat.S_IFLNK) from None
        raise
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):  # replaced since the lstat
            raise _not_regular(path, found.st_mode)
        if found.st_size > limit:
            raise Refused(path, f"is {found.st_size:,} bytes, over the limit of {limit:,}; it was not read")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:  # it grew while being read
        raise Refused(path, f"is over the limit of {plural(limit, 'byte')}; it was not read")
    return b"".join(chunks)
