"""A logit lens as a PDF page for the LaTeX builder: the same shapes as its SVG, through matplotlib.

The drawing code is imported when a PDF is drawn: an HTML build names this drawer but never calls it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def lens_pdf(data: dict[str, Any], path: Path, *, title: str, colormap: str) -> None:
    """The grid with its colour bar; the title is printed above it (paper has no accessible name)."""
    from ...render.mpl_writer import save_pdf
    from .grid import lens_drawing

    save_pdf(lens_drawing(data, title=title, alt="", colormap=colormap), path, heading=True)
