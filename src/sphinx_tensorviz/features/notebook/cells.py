"""The cells a figure becomes when its kind says nothing of its own (:attr:`~...core.kinds.FigureKind.notebook`).

Its title and prediction prompt first, as on the page (a reader predicts before seeing); then a
code cell that recomputes it with ``run.py``'s ``reproduce()`` and compares, whose outputs are the
recorded figure and table, so the figure shows before anything runs. A figure with nothing to run
(a trained model's, a kind without ``run.py``) is shown as recorded, in a Markdown cell.
"""

from __future__ import annotations

from typing import Any

from ...core.notebook import Cell, NotebookFigure, code_cell, markdown_cell, picture_cell, recorded_outputs


def prompt_cell(title: str, render: dict[str, Any]) -> Cell:
    """The figure's title and, before the figure, its prediction prompt and choices."""
    lines = [f"**{' '.join(title.split())}**"]
    if render.get("prediction"):
        lines += ["", f"*Predict first:* {render['prediction']}"]
    for choice in render.get("choices") or []:
        text = choice.get("text") if isinstance(choice, dict) else str(choice)
        lines.append(f"- {text}")
    cell = markdown_cell("\n".join(lines))
    cell["metadata"]["tensorviz"] = {"prompt": True}  # the setup cell goes before the first figure's
    return cell


def default_cells(figure: NotebookFigure) -> list[Cell]:
    """Recompute-and-compare code with the recorded figure as its output, or the picture alone."""
    if not figure.code:
        return [picture_cell(figure, "The figure as recorded; it needs what the notebook does not carry "
                                     "(a trained model's weights) to run again.")]
    return [code_cell(figure.code, recorded_outputs(figure), {"tensorviz": figure.metadata})]


def answer_cell(render: dict[str, Any]) -> Cell | None:
    """After the figure: the marked choice and each choice's why, folded (as the page reveals them)."""
    choices = [c for c in render.get("choices") or [] if isinstance(c, dict)]
    if not choices:
        return None
    lines = ["<details><summary>Answer</summary>", ""]
    for choice in choices:
        mark = "**(correct)** " if choice.get("correct") else ""
        why = f": {choice['why']}" if choice.get("why") else ""
        lines.append(f"- {mark}{choice['text']}{why}")
    return markdown_cell("\n".join([*lines, "", "</details>"]))
