"""Drawn figures, kept by (recording, renderer hash): drawing a figure once per machine is enough.

An SVG, a graph's outline or its per-module layout data depend only on the recording (the
artifact) and on the renderer hash (the drawing code and the render options). So they are kept
in a machine-local cache shared by every build and output folder of the user
(``~/.cache/sphinx-tensorviz/drawings``, ``tensorviz_drawing_cache``): a fresh output folder,
a ``make clean`` or a second checkout of the course draws nothing it drew before. Entries are
written atomically; entries unused for :data:`MAX_AGE_DAYS` are removed once per process.
A cache entry is only a copy of what the drawing code would make again: a damaged or missing
one is drawn anew.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from ..core.hashing import digest
from ..core.locations import cache_home
from .outputs import replace_atomically

#: entries not used for this long are removed (used ones are touched at most once a day)
MAX_AGE_DAYS = 30
_DAY = 24 * 3600.0
#: a file in the cache folder whose time is that of the last pruning
PRUNED_STAMP = "last-pruned"


def artifact_key(artifact: dict[str, Any], stored_sha256: str | None = None) -> str:
    """Names one recording by everything drawn from it, so a re-executed, pulled or edited
    artifact never reuses an old drawing.

    Given the sha256 of the artifact's stored bytes (:meth:`~.ArtifactStore.stored_sha256`, known
    from the read that checked it), the key is made from that: those bytes hold everything drawn.
    Otherwise the drawn fields are hashed, which takes milliseconds for a graph's recording; every
    part drawn from it asks, so that key is kept for the artifact object the store handed out
    (read-only, shared while its file is unchanged): a re-read file is a new object, and gets a
    new key.
    """
    if stored_sha256 is not None:
        return digest({"stored": stored_sha256})
    known = _KEYS.get(id(artifact))
    if known is not None and known[0] is artifact:
        return known[1]
    key = digest({k: artifact.get(k) for k in ("contentHash", "generatedAt", "data", "checks", "environment")})
    if len(_KEYS) >= _KEPT_KEYS:
        _KEYS.pop(next(iter(_KEYS)))  # oldest first
    _KEYS[id(artifact)] = (artifact, key)  # holding the object keeps its id from being reused
    return key


#: keys of the artifacts drawn last, by object identity (bounded: it holds the artifacts, and a long
#: process, a test run, reads thousands)
_KEYS: dict[int, tuple[dict[str, Any], str]] = {}
_KEPT_KEYS = 64  # a page asks again soon after (each part, each checkpoint); few are held past a build


def drawing_cache_folder(machine_local: bool, doctreedir: Path) -> Path:
    """Where drawings are kept: the machine-local cache, or (``tensorviz_drawing_cache = False``)
    the build's doctree folder, as a build product that goes with it."""
    return cache_home() / "drawings" if machine_local else doctreedir / "tensorviz-figures"


class RenderCache:
    def __init__(self, root: Path) -> None:
        self.root = root
        _prune_once(root)

    def svg(self, recording: str, renderer_hash: str, draw: Callable[[], str]) -> str:
        """The SVG for ``recording`` (:func:`artifact_key`) drawn with ``renderer_hash``'s options."""
        return self.text(recording, renderer_hash, "svg", draw)

    def text(self, recording: str, renderer_hash: str, suffix: str, draw: Callable[[], str]) -> str:
        """Any text made from ``recording`` with ``renderer_hash``'s options (an SVG, an outline)."""
        name = f"{recording[:32]}-{renderer_hash[:32]}.{suffix}"
        kept = self.read(recording[:2], name)
        if kept is not None:
            try:
                return kept.decode("utf-8")
            except UnicodeDecodeError:
                pass
        markup = draw()
        self.write(recording[:2], name, markup)
        return markup

    def read(self, folder: str, name: str) -> bytes | None:
        """The entry ``folder/name`` (marked as used), or ``None`` when it is absent or unreadable."""
        path = self.root / folder / name
        try:
            content = path.read_bytes()
        except OSError:
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
                if entry.stat().st_mtime < limit or (entry.suffix == ".tmp" and entry.stat().st_mtime < time.time() - _DAY):
                    entry.unlink(missing_ok=True)
        except OSError:
            continue
    try:
        stamp.touch()  # made, or its time set to now
    except OSError:  # a read-only cache: it is walked again next time, nothing else
        pass
