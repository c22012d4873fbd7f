"""A graph as a PDF page for the LaTeX builder: the default view, through matplotlib.

The drawing code is imported when a PDF is drawn: an HTML build names this drawer but never calls it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...render.mpl_writer import PDF_ID_PREFIX, save_pdf


def graph_pdf(layout: Any, path: Path, markers: dict[str, list[tuple[int, str]]] | None = None) -> None:
    """The default (collapsed) view of a graph layout, with the guided tour's step numbers on the
    boxes it visits. Boxes are drawn from the layout alone (their kind and op pick the tone)."""
    from .svg import graph_drawing

    save_pdf(graph_drawing({}, layout, id_prefix=PDF_ID_PREFIX, title="", desc="", markers=markers), path)
