"""Notice files that lesson code put into the store, and set them aside unread.

In the default mode lesson code runs as the user who builds, so it *can* write into
``tensorviz_artifacts/``, e.g. a forged artifact for another figure (a name is just
the hash of a request anyone can compute). It cannot be stopped there, so it is
detected: the store is listed before the workers start and again after they end;
a file that appeared or changed, and that no build wrote through the store (its
name and SHA-256 are not in the ledger, see :meth:`ArtifactStore.written_since`),
is moved to ``failures/quarantine/`` (git-ignored) and never read as an artifact.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .artifacts import LEDGER, ArtifactStore
from .files import read_regular

#: files of the store's own machinery, which change without being artifacts
_OWN = {f"failures/{LEDGER}", "failures/.lock"}
QUARANTINE = "failures/quarantine"


@dataclass(frozen=True)
class StoreListing:
    """What the store held when jobs started: path -> (mtime_ns, size, inode), and where its ledger ended."""

    files: dict[str, tuple[int, int, int]]
    ledger_mark: tuple[int, int]


@dataclass(frozen=True)
class Intruder:
    """A file that appeared or changed while jobs ran, and where it was moved."""

    name: str
    change: str  # "new" or "changed"
    mtime: float
    fate: str  # what became of it, for the warning


def list_store(store: ArtifactStore) -> StoreListing:
    return StoreListing(_files(store.root), store.ledger_mark())


def set_aside_intruders(store: ArtifactStore, before: StoreListing) -> list[Intruder]:
    """Move every file that appeared or changed since ``before`` and no build wrote; return them.

    Call with the store lock held, so no concurrent build is half-way through a write.
    """
    legit = store.written_since(before.ledger_mark)
    found: list[Intruder] = []
    for name, signature in sorted(_files(store.root).items()):
        old = before.files.get(name)
        if old == signature:
            continue
        path = store.root / name
        if (name, _sha256(path, store.read_limit)) in legit:
            continue
        found.append(Intruder(name, "new" if old is None else "changed", signature[0] / 1e9, _set_aside(store, name)))
    return found


def _files(root: Path) -> dict[str, tuple[int, int, int]]:
    found: dict[str, tuple[int, int, int]] = {}
    if not root.is_dir():
        return found
    for folder, dirs, names in os.walk(root):
        relative = Path(folder).relative_to(root).as_posix()
        if relative == QUARANTINE or relative.startswith(QUARANTINE + "/"):
            dirs[:] = []
            continue
        for name in names:
            key = name if relative == "." else f"{relative}/{name}"
            if key in _OWN:
                continue
            try:
                stat = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            found[key] = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    return found


def _sha256(path: Path, limit: int) -> str:
    """The file's sha256; ``""`` (vouched for by no ledger line) for anything not a readable regular file."""
    try:
        return hashlib.sha256(read_regular(path, limit)).hexdigest()
    except OSError:
        return ""


def _set_aside(store: ArtifactStore, name: str) -> str:
    """Move ``name`` out of the store's readable part; say where (or that it could not be)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    target = store.root / QUARANTINE / stamp / name
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(store.root / name, target)
        return f"moved to {target.relative_to(store.root)}"
    except OSError:
        pass
    try:  # at least make sure it is never read as an artifact
        (store.root / name).unlink()
        return "deleted (it could not be moved)"
    except OSError as exc:
        return f"could not be moved or deleted ({exc}); remove it by hand"
