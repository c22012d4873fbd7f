"""The figures of a page as its notebook shows them: recorded picture, table and recomputing code.

The picture and the table are the kind's own :class:`~...render.parts.FigureParts`, drawn from the
stored artifact as the page draws them (through the drawing cache, so a built course draws nothing
twice); the code is ``run.py``'s (:mod:`...execute.reproduce`), so a notebook recomputes a figure
exactly as its "Reproduce this figure" download does.
"""

from __future__ import annotations

import html
from typing import Any

from docutils import nodes

from ...core.kinds import FigureKind
from ...core.notebook import NotebookFigure
from ...core.request import TRAINED, ExecutionRequest
from ...execute.reproduce import code_files, kind_script, record_line
from ...render.page import RenderContext
from ...render.svg import ID_TOKEN


def inline_file(content_hash: str) -> str:
    """The file a figure's inline code is saved as beside the notebook (one per figure of the page)."""
    return f"lesson_code_{content_hash[:12]}.py"


def notebook_figure(kind: FigureKind, request: ExecutionRequest, artifact: dict[str, Any], ctx: RenderContext,
                    number: int, files: dict[str, bytes]) -> NotebookFigure:
    """Figure ``number`` of the page; adds the code files its cell needs to ``files``."""
    parts = kind.entry("parts")(artifact, request.render, request.renderer_hash, ctx)
    content_hash = artifact["contentHash"]
    svg = parts.svg.replace(ID_TOKEN, f"nb{content_hash[:8]}")
    table = next((t for detail in parts.details for t in detail.findall(nodes.table)
                  if "tv-data-table" in t["classes"]), None)
    variable = f"figure_{number}"
    code = ""
    if kind.reproduce and TRAINED not in request.options:  # a trained model's weights do not travel
        needed = code_files(artifact, ctx.srcdir, request.inline_code, inline_file(content_hash))
        files.update(needed)
        entry = inline_file(content_hash) if inline_file(content_hash) in needed else None
        # one comment line: a title or a file name holding a newline cannot end it and become code
        code = "\n".join([_one_line(f"# {parts.title}: recomputed from {entry or request.entry}, as run.py does"),
                          record_line(artifact, entry), "", kind_script(artifact),
                          f"{variable} = reproduce()", f'compare({variable}, RECORD["expected"])'])
    return NotebookFigure(artifact, parts.title, parts.alt, svg, table_html(table) if table is not None else "",
                          table_text(table) if table is not None else "", code, variable,
                          {"contentHash": content_hash, "kind": kind.name, "variable": variable})


def table_html(table: nodes.table) -> str:
    """A data table (:func:`~...render.tables.data_table`) as HTML: caption, header row, row labels."""
    caption = next((t.astext() for t in table.children if isinstance(t, nodes.title)), "")
    rows = [[entry.astext() for entry in row.children] for row in table.findall(nodes.row)]
    head, body = (rows[0], rows[1:]) if rows else ([], [])
    out = [f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
           + "".join(f'<th scope="col">{html.escape(cell)}</th>' for cell in head) + "</tr></thead><tbody>"]
    for row in body:
        label, *cells = row or [""]
        out.append(f'<tr><th scope="row">{html.escape(label)}</th>'
                   + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>")
    return "".join(out) + "</tbody></table>"


def table_text(table: nodes.table) -> str:
    caption = next((t.astext() for t in table.children if isinstance(t, nodes.title)), "")
    rows = ["\t".join(entry.astext() for entry in row.children) for row in table.findall(nodes.row)]
    return "\n".join([caption, *rows])


def _one_line(text: str) -> str:
    return " ".join(text.split())

