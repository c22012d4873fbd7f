"""Figures as PDF pages for the LaTeX builder: the page's own drawings, drawn with matplotlib.

Each function builds the same :class:`~.shapes.Drawing` as the figure's SVG and hands it to
:func:`.mpl_writer.save_pdf` (which imports matplotlib only when drawing), so paper and page show
the same cells, colour bar, boxes, edges and tour markers. No time stamps go into the files, so
the same figure gives the same PDF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .mpl_writer import save_pdf

# Each drawing module is imported by the function that draws with it: an HTML build imports this
# module (figures name their PDF drawer) but never draws a PDF, nor loads a kind it does not show.

#: Paper has no page ids; the drawings still want a valid prefix.
PREFIX = "tvpdf"


def heatmap_pdf(data: dict[str, Any], path: Path, title: str, colormap: str,
                limits: tuple[float, float] | None = None) -> None:
    """The heatmap with its labelled colour bar. ``limits``: the ends of a colour scale shared
    with other figures (a sweep); without them the scale fits this data, as on the page."""
    from .colors import Scale
    from .heatmap_svg import heatmap_drawing

    scale = Scale(colormap, limits[0], limits[1], data["diverging"]) if limits else None
    # the title is printed above the picture, as it always was: paper shows no accessible name
    save_pdf(heatmap_drawing(data, title=title, alt="", colormap=colormap, scale=scale), path, heading=True)


def graph_pdf(layout: Any, path: Path, markers: dict[str, list[tuple[int, str]]] | None = None) -> None:
    """The default (collapsed) view of a graph layout, with the guided tour's step numbers on the
    boxes it visits. Boxes are drawn from the layout alone (their kind and op pick the tone)."""
    from .graph_svg import graph_drawing

    save_pdf(graph_drawing({}, layout, id_prefix=PREFIX, title="", desc="", markers=markers), path)


def diagram_pdf(diagram: dict[str, Any], path: Path) -> None:
    """An authored diagram, from the same shapes (quadratic curves, arrowheads) as its SVG."""
    from .diagram_svg import diagram_drawing

    save_pdf(diagram_drawing(diagram, id_prefix=PREFIX), path)
