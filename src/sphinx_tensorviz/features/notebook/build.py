"""One lesson's notebook: its page's prose, and each figure's cells where the page shows the figure.

The page's source (MyST Markdown) gives the prose (:mod:`.myst`); the doctree Sphinx read gives the
figures, found by the lines of the directive that made them, with their requests; the store gives
the artifacts. Each figure's kind says what cells it becomes (:attr:`~...core.kinds.FigureKind.notebook`),
else :func:`.cells.default_cells`. Nothing is executed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from docutils import nodes

from ...core.hashing import digest
from ...core.kinds import FigureKind, resolve
from ...core.limits import Limits, data_size_problem
from ...core.nodes import tensorviz_figure
from ...core.notebook import Cell, code_cell, markdown_cell
from ...core.request import ExecutionRequest
from ...execute.reproduce import notebook_setup
from ...render.page import RenderContext
from ...store.artifacts import ArtifactStore
from .cells import answer_cell, default_cells, prompt_cell
from .figures import notebook_figure
from .myst import Blocks, Directive, body_blocks, page_blocks

#: the frameworks a lesson's setup cell may name
FRAMEWORKS = ("jax", "numpy", "torch")
#: nbformat 4.5: the version whose schema ``nbformat.validate`` checks these cells against
NBFORMAT, NBFORMAT_MINOR = 4, 5


@dataclass
class Lesson:
    """What a page's notebook is made from, and what it collects while it is made."""

    docname: str
    source: str  #: the page's MyST source
    figures: list[tensorviz_figure]  #: the executed figures Sphinx read on the page
    kinds: dict[str, FigureKind]  #: by directive
    store: ArtifactStore
    ctx: RenderContext
    limits: Limits  #: the figure limits: an artifact over them is not drawn, as on the page
    depth: int = 0  #: how many folders below the project's the page is
    files: dict[str, bytes] = field(default_factory=dict)  #: the code files its cells need beside it
    frameworks: set[Any] = field(default_factory=set)  #: as the artifacts record them
    numbered: int = 0


def notebook(lesson: Lesson) -> dict[str, Any]:
    """The nbformat 4 notebook of ``lesson`` (a JSON document)."""
    cells = _cells(page_blocks(lesson.source), lesson)
    if any(c["cell_type"] == "code" for c in cells):  # before the first figure, with its prompt
        first = next(n for n, c in enumerate(cells) if "tensorviz" in c["metadata"])
        cells[first:first] = _setup(lesson)
    return {"nbformat": NBFORMAT, "nbformat_minor": NBFORMAT_MINOR, "cells": _with_ids(cells),
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"},
                         "tensorviz": {"lesson": lesson.docname, "inputs": inputs_key(lesson)}}}


def _cells(blocks: Blocks, lesson: Lesson) -> list[Cell]:
    cells: list[Cell] = []
    for item in blocks.items:
        if isinstance(item, str):
            cells.append(markdown_cell(item))
            continue
        found = [n for n in lesson.figures if n.line is not None and item.first <= n.line <= item.last]
        if found:
            for node in found:
                cells.extend(_figure_cells(node, lesson))
        else:  # a lesson header, a tour, a figure drawn from another's artifact: their words
            cells.extend(_words(item, lesson))
    return cells


#: a directive's options a notebook keeps as words, and how each is introduced (a lesson's credits
#: travel with its notebook)
WORDED_OPTIONS = {"question": "> **Question:** ", "limitations": "*Limitations:* ", "attribution": "*Credits:* ",
                  "license": "*License:* "}


def _words(directive: Directive, lesson: Lesson) -> list[Cell]:
    """What a ``tv-*`` directive that made no figure says: its title, question and credits, and its body."""
    heading = [f"**{directive.options['title']}**"] if directive.options.get("title") else []
    heading += [f"{intro}{directive.options[name]}" for name, intro in WORDED_OPTIONS.items()
                if directive.options.get(name)]
    cells = [markdown_cell("\n\n".join(heading))] if heading else []
    return cells + _cells(body_blocks(directive), lesson)


def figure_requests(node: tensorviz_figure) -> list[tuple[str, ExecutionRequest]]:
    """The requests a figure node shows, each with its label: its own (no label), or each point's of a
    sweep (``divisor = 2``)."""
    sweep = node.get("sweep")
    return [(p.label, p.request) for p in sweep.points] if sweep is not None else [("", node["request"])]


def inputs_key(lesson: Lesson) -> str:
    """What the notebook is made from: the page's source, and each figure's content and renderer hash
    (which covers its render options and the drawing and notebook code) and whether it is stored."""
    figures = [[r.content_hash, r.renderer_hash, lesson.store.has_artifact(r.content_hash)]
               for node in lesson.figures for _, r in figure_requests(node)]
    return digest({"docname": lesson.docname, "source": lesson.source, "figures": figures, "code": _code()})


@cache
def _code() -> str:
    """The code that writes the cells from outside ``features/`` (which the renderer hash covers): the
    cell helpers, and ``run.py``'s pieces with the loader, seeding and tolerances they copy."""
    from ...core import notebook as helpers
    from ...execute import reproduce

    return digest([notebook_setup(), Path(helpers.__file__).read_text("utf-8"),
                   Path(reproduce.__file__).read_text("utf-8")])


def _figure_cells(node: tensorviz_figure, lesson: Lesson) -> list[Cell]:
    cells: list[Cell] = []
    shown = figure_requests(node)
    for number, (label, request) in enumerate(shown):
        kind = lesson.kinds.get(request.directive)
        found = lesson.store.read_artifact(request.content_hash)
        title = str(request.render.get("title") or request.directive) + (f" ({label})" if label else "")
        cells.append(prompt_cell(title, request.render if number == 0 else {}))  # a sweep asks once
        if kind is None or not isinstance(found, dict):  # the page says why (missing, failed, corrupt)
            cells.append(markdown_cell(f"*This figure is not in the store (content hash {request.content_hash[:12]}): "
                                       "it has not been computed yet, or could not be.*"))
            continue
        too_big = data_size_problem(found["data"], lesson.limits)
        if too_big:  # as on the page, which warns: a committed artifact from before the limit
            cells.append(markdown_cell(f"*This figure is not drawn: {too_big}*"))
            continue
        lesson.numbered += 1
        lesson.frameworks.add(found["environment"].get("framework"))
        figure = notebook_figure(kind, request, found, lesson.ctx, lesson.numbered, lesson.files)
        cells.extend(resolve(kind.notebook)(figure) if kind.notebook else default_cells(figure))
    answer = answer_cell(shown[0][1].render)  # after the figure (a sweep's last point)
    if answer is not None:
        cells.append(answer)
    return cells


def _setup(lesson: Lesson) -> list[Cell]:
    # named from the artifacts, which may come from a shared store: only the frameworks there are
    needs = ", ".join(sorted(f for f in lesson.frameworks if f in FRAMEWORKS and f != "numpy") + ["numpy"])
    text = ("The figures below show as they were recorded when the course was built. To compute them again, "
            f"run this cell first (it needs {needs}, and the lesson's files beside this notebook, as in its "
            "download): it loads the lesson's code and seeds it as the build did. Each figure's cell then "
            "recomputes it and compares it with the record, within the tolerance of each value's dtype.")
    return [markdown_cell(text), code_cell(notebook_setup(lesson.depth), metadata={"tensorviz": {"setup": True}})]


def _with_ids(cells: list[Cell]) -> list[Cell]:
    """nbformat 4.5 cells carry an id; numbered in order, so the same lesson gives the same file."""
    return [{"id": f"cell-{number}", **cell} for number, cell in enumerate(cells)]


def executed_figures(doctree: nodes.document) -> list[tensorviz_figure]:
    return [n for n in doctree.findall(tensorviz_figure) if n.get("request") is not None]
