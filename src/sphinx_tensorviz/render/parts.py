"""What a figure is made of, independent of the output format.

Each directive's renderer returns :class:`FigureParts`; :mod:`.assemble` turns
them into HTML, LaTeX or plain nodes. This keeps the per-builder layout in one
place for every kind of figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes

from ..warnings_ import Subtype


@dataclass
class FigureParts:
    title: str
    alt: str
    svg: str  #: inline SVG; ids prefixed with ``svg.ID_TOKEN``
    details: list[nodes.Node] = field(default_factory=list)  #: long description, table or outline
    draw_pdf: Callable[[Path], None] | None = None  #: writes the figure for LaTeX
    extra_html: list[nodes.Node] = field(default_factory=list)  #: HTML-only additions (source panel)
    #: several pictures for LaTeX, laid out as a grid: (caption, drawer) each (a sweep's points)
    pdf_grid: list[tuple[str, Callable[[Path], None]]] = field(default_factory=list)
    #: what the kind found wrong in what it draws, warned at the figure's directive on every build
    warnings: list[tuple[str, Subtype]] = field(default_factory=list)
