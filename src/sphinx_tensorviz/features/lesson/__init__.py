"""Lesson pages and the course catalogue: ``tv-lesson`` (a lesson's question, facts, milestone,
limitations and credits) and ``tv-catalogue`` (every lesson, with a preview of its main figure).

Metadata is kept per document (:func:`sphinx_tensorviz.core.state.lessons_of`), so a catalogue
is written after every lesson has been read, whatever ``-j`` says.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ...core.nodes import add_placeholder_node, tensorviz_figure
from ...core.state import catalogues_of, lessons_of
from ...render.registry import add_page_pass, lazy
from .directive import CatalogueDirective, LessonDirective, tensorviz_catalogue, tensorviz_lesson

ORDER = 30


def setup_lesson(app: Sphinx) -> None:
    app.add_directive("tv-lesson", LessonDirective)
    app.add_directive("tv-catalogue", CatalogueDirective)
    add_placeholder_node(app, tensorviz_lesson)
    add_placeholder_node(app, tensorviz_catalogue)
    app.connect("doctree-read", choose_preview)
    app.connect("env-get-outdated", catalogues_to_reread)
    add_page_pass(app, ORDER, lazy(f"{__name__}.catalogue:render_lessons"))


def choose_preview(app: Sphinx, doctree: Any) -> None:
    """The lesson's preview figure: ``:preview:`` by name, else its first executed figure."""
    meta = lessons_of(app.env).get(app.env.docname)
    if meta is None:
        return
    figures = [n for n in doctree.findall(tensorviz_figure) if n["request"] is not None]
    wanted = meta.get("preview")
    chosen = next((n for n in figures if wanted in n["names"]), None) if wanted else None
    if chosen is None and figures:
        chosen = figures[0]
    meta["previewRequest"] = chosen["request"] if chosen is not None else None


def catalogues_to_reread(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                         removed: set[str]) -> list[str]:
    """A lesson may have changed: the pages with a catalogue list every lesson, so they are read again."""
    if not (added or changed or removed):
        return []
    return sorted(d for d in catalogues_of(env) if d not in removed)
