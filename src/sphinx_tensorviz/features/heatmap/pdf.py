"""A heatmap as a PDF page for the LaTeX builder: the same drawing as its SVG, through matplotlib.

The drawing code is imported when a PDF is drawn: an HTML build names this drawer but never calls it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...render.mpl_writer import save_pdf


def heatmap_pdf(data: dict[str, Any], path: Path, title: str, colormap: str,
                limits: tuple[float, float] | None = None) -> None:
    """The heatmap with its labelled colour bar. ``limits``: the ends of a colour scale shared
    with other figures (a sweep); without them the scale fits this data, as on the page."""
    from ...render.cell_grid import cell_grid_drawing
    from ...render.colors import Scale

    scale = Scale(colormap, limits[0], limits[1], data["diverging"]) if limits else None
    # the title is printed above the picture, as it always was: paper shows no accessible name
    save_pdf(cell_grid_drawing(data, title=title, alt="", colormap=colormap, scale=scale), path, heading=True)
