"""A bar chart in a lesson's notebook: the bars as a Markdown table a reader can edit and copy, then
the code cell every kind gets (``run.py``'s code, with the recorded chart as its output)."""

from __future__ import annotations

from sphinx_tensorviz.core.notebook import Cell, NotebookFigure, code_cell, markdown_cell, recorded_outputs


def bar_cells(figure: NotebookFigure) -> list[Cell]:
    data = figure.artifact["data"]
    rows = [f"| {label} | {value:g} |" for label, value in zip(data["labels"], data["values"])]
    table = markdown_cell("\n".join([f"| bar | {data['unit']} |", "|---|---|", *rows]))
    return [table, code_cell(figure.code, recorded_outputs(figure), {"tensorviz": figure.metadata})]
