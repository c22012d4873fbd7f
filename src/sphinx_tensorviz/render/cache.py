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

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.hashing import digest
from ..core.kept_files import MAX_AGE_DAYS, PRUNED_STAMP, KeptFiles
from ..core.locations import cache_home

__all__ = ["MAX_AGE_DAYS", "PRUNED_STAMP", "RenderCache", "artifact_key", "drawing_cache_folder"]


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


class RenderCache(KeptFiles):
    """The drawing cache: drawings and the parts of HTML figures (:mod:`.part_cache`)."""

    def svg(self, recording: str, renderer_hash: str, draw: Callable[[], str]) -> str:
        """The SVG for ``recording`` (:func:`artifact_key`) drawn with ``renderer_hash``'s options."""
        return self.text(recording, renderer_hash, "svg", draw)
