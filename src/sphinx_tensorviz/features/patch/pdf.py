"""A patching heatmap as a PDF page for the LaTeX builder: the same shapes as its SVG, through matplotlib.

The drawing code is imported when a PDF is drawn: an HTML build names this drawer but never calls it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def patch_pdf(grid: dict[str, Any], path: Path, *, title: str, colormap: str, scale: Any) -> None:
    """The heatmap with its colour bar centred on zero; the title is printed above it (paper has no
    accessible name)."""
    from ...render.cell_grid import cell_grid_drawing
    from ...render.mpl_writer import save_pdf

    save_pdf(cell_grid_drawing(grid, title=title, alt="", colormap=colormap, scale=scale), path, heading=True)
