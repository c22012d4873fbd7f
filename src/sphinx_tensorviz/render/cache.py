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


class RenderCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def svg(self, content_hash: str, renderer_hash: str, draw: Callable[[], str]) -> str:
        path = self.root / f"{content_hash[:32]}-{renderer_hash[:32]}.svg"
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
