"""Files that kinds return beside their artifacts (a training run's weights), kept in the store.

``<store>/weights/<sha256>.<extension>``: named by content, so a file is written once however many
artifacts name it, an artifact finds its files by the hashes it lists, and a file is never changed
in place. Written atomically (a temporary file in the same folder, then a rename), so a reader sees
the whole file or none. No page needs them: a build draws from the artifact alone, and a cache-only
build (Read the Docs) works without this folder; a later figure that loads a snapshot reads them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .artifacts import FILE_MODE, ArtifactStore
from .files import read_regular

#: the store's folder of returned files
FOLDER = "weights"


def returned_file_path(root: Path, name: str) -> Path:
    """Where the file ``<sha256>.<extension>`` lives in the store at ``root``."""
    return Path(root) / FOLDER / name


def store_returned_file(store: ArtifactStore, name: str, content: bytes) -> Path:
    """Write ``content`` as ``name`` unless the store already holds those bytes; return its path."""
    path = returned_file_path(store.root, name)
    try:
        if hashlib.sha256(read_regular(path, len(content))).hexdigest() == name.partition(".")[0]:
            return path
    except OSError:  # absent, not a regular file, larger or unreadable: replaced below
        pass
    with store.lock():
        _atomic_write_bytes(path, content)
        store.note_written(path, content)
    return path


def _atomic_write_bytes(path: Path, content: bytes) -> None:
    """A temporary file in the same folder, flushed to disk, then renamed over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
