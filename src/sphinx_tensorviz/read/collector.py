"""Keeps the per-document tables of :mod:`sphinx_tensorviz.core.state` right under ``sphinx-build -j``.

The collector purges a document's entries when it is re-read, merges the entries of
parallel read workers, and picks each lesson's preview figure once its page is read.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector

from ..core.nodes import tensorviz_figure
from ..core.state import ATTR, CATALOGUES, LESSONS, lessons_of, table


class RequestCollector(EnvironmentCollector):
    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        for attr in (ATTR, LESSONS, CATALOGUES):
            table(env, attr).pop(docname, None)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        for attr in (ATTR, LESSONS, CATALOGUES):
            mine, theirs = table(env, attr), table(other, attr)
            for docname in docnames:
                if docname in theirs:
                    mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: Any) -> None:
        """Pick the lesson's preview figure (``:preview:`` by name, else its first executed figure)."""
        meta = lessons_of(app.env).get(app.env.docname)
        if meta is None:
            return
        figures = [n for n in doctree.findall(tensorviz_figure) if n["request"] is not None]
        wanted = meta.get("preview")
        chosen = next((n for n in figures if wanted in n["names"]), None) if wanted else None
        if chosen is None and figures:
            chosen = figures[0]
        meta["previewRequest"] = chosen["request"] if chosen is not None else None
