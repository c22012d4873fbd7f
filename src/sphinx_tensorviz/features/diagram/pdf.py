"""An authored diagram as a PDF page for the LaTeX builder, through matplotlib."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...render.mpl_writer import PDF_ID_PREFIX, save_pdf


def diagram_pdf(diagram: dict[str, Any], path: Path) -> None:
    """An authored diagram, from the same shapes (quadratic curves, arrowheads) as its SVG."""
    from .svg import diagram_drawing

    save_pdf(diagram_drawing(diagram, id_prefix=PDF_ID_PREFIX), path)
