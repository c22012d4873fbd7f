"""An attention grid as a PDF page for the LaTeX builder: the same shapes as its SVG, through matplotlib.

The drawing code is imported when a PDF is drawn: an HTML build names this drawer but never calls it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def attention_pdf(data: dict[str, Any], path: Path, *, title: str, colormap: str) -> None:
    """The grid with its shared colour bar; the title is printed above it (paper has no accessible name)."""
    from ...render.mpl_writer import save_pdf
    from .grid import grid_drawing

    save_pdf(grid_drawing(data, title=title, alt="", colormap=colormap), path, heading=True)
