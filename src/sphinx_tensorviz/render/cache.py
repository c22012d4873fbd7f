"""Rendered-figure cache keyed by (content hash, renderer hash).

A warm build that must re-write a page reuses the SVG instead of drawing it
again. Entries live in the doctree folder (a build product, not the committed
store) and are written atomically.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.hashing import digest


def artifact_key(artifact: dict[str, Any]) -> str:
    """Names one recording by everything drawn from it, so a re-executed, pulled or edited
    artifact never reuses an old drawing."""
    return digest({k: artifact.get(k) for k in ("contentHash", "generatedAt", "data", "checks", "environment")})


class RenderCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def svg(self, recording: str, renderer_hash: str, draw: Callable[[], str]) -> str:
        """The SVG for ``recording`` (:func:`artifact_key`) drawn with ``renderer_hash``'s options."""
        return self.text(recording, renderer_hash, "svg", draw)

    def text(self, recording: str, renderer_hash: str, suffix: str, draw: Callable[[], str]) -> str:
        """Any text made from ``recording`` with ``renderer_hash``'s options (an SVG, an outline)."""
        path = self.root / f"{recording[:32]}-{renderer_hash[:32]}.{suffix}"
        try:
            return path.read_text("utf-8")
        except OSError:
            pass
        markup = draw()
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(markup)
        os.replace(tmp, path)
        return markup
