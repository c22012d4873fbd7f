"""A figure as a lesson's notebook sees it, and the nbformat 4 cells it becomes.

Here, not in the notebook feature, because a figure kind may say how its own figures become cells
(:attr:`~.kinds.FigureKind.notebook`) and a kind's package imports only the stages and ``core/``,
never a sibling feature. The cells are plain dictionaries of the nbformat 4 schema: writing a
notebook needs no Jupyter package (the ``notebook`` extra is for running and validating one).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Any

#: one nbformat 4 cell
Cell = dict[str, Any]


@dataclass(frozen=True)
class NotebookFigure:
    """One executed figure of a lesson, with what its notebook cells are made from."""

    artifact: dict[str, Any]  #: the stored artifact
    title: str
    alt: str
    svg: str  #: the figure as a standalone SVG document
    table_html: str = ""  #: the data table as HTML (empty: the kind draws none)
    table_text: str = ""  #: the same table as tab-separated text
    #: the Python statements that recompute it (``run.py``'s, see
    #: :func:`~..execute.reproduce.kind_script`), or empty when it cannot run from the notebook
    #: (a trained model's figure, a kind without ``run.py``)
    code: str = ""
    variable: str = "figure"  #: the name the recomputed values are bound to
    metadata: dict[str, Any] = field(default_factory=dict)  #: the cell's ``tensorviz`` metadata


def markdown_cell(text: str, attachments: dict[str, dict[str, str]] | None = None) -> Cell:
    cell: Cell = {"cell_type": "markdown", "metadata": {}, "source": text}
    if attachments:
        cell["attachments"] = attachments
    return cell


def code_cell(source: str, outputs: list[dict[str, Any]] | None = None, metadata: dict[str, Any] | None = None) -> Cell:
    return {"cell_type": "code", "execution_count": None, "metadata": metadata or {}, "outputs": outputs or [],
            "source": source}


def recorded_outputs(figure: NotebookFigure) -> list[dict[str, Any]]:
    """The figure as recorded, shown under its code before anything runs: the SVG and the data table.

    The SVG also comes as an HTML ``<img>`` of it (with the alt text), which is what JupyterLab shows:
    a downloaded notebook is never trusted (its signature is in the reader's own database), and an
    untrusted notebook shows an ``image/svg+xml`` output only as its plain text, while sanitized HTML
    with a ``data:`` image is safe to show. Readers that trust SVG use it; all keep the alt text."""
    outputs = [{"output_type": "display_data", "metadata": {},
                "data": {"image/svg+xml": figure.svg, "text/html": _svg_img(figure), "text/plain": figure.alt}}]
    if figure.table_html:
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {"text/html": figure.table_html, "text/plain": figure.table_text}})
    return outputs


def picture_cell(figure: NotebookFigure, note: str) -> Cell:
    """The recorded figure in a Markdown cell, for a figure with nothing to run.

    The SVG is a ``data:`` image in the Markdown, not a cell attachment: JupyterLab shows attachments
    of bitmap types only, and an SVG attachment as a broken image."""
    text = f"![{_bracket_safe(figure.alt)}]({_data_uri(figure.svg)})\n\n*{note}*"
    cell = markdown_cell(text)
    cell["metadata"]["tensorviz"] = figure.metadata
    return cell


def _data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode("ascii")


def _svg_img(figure: NotebookFigure) -> str:
    return f'<img alt="{html.escape(" ".join(figure.alt.split()))}" src="{_data_uri(figure.svg)}">'


def _bracket_safe(text: str) -> str:
    return " ".join(text.replace("[", "(").replace("]", ")").split())
