"""Keeps the per-document tables of :mod:`sphinx_tensorviz.core.state` right under ``sphinx-build -j``.

The collector purges a document's entries when it is re-read and merges the entries of
parallel read workers.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector

from ..core.state import ATTR, CATALOGUES, LESSONS, table


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

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing to collect from the doctree: the directives fill the tables while they run."""
