"""The execution report: ``_tensorviz/execution-times.html``, every executed figure, slowest first.

Like sphinx-gallery's ``sg_execution_times``: written after each HTML build (:mod:`.page`) from
the execution facts the artifacts record; ``tensorviz status --times`` prints the same table.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from .page import write_execution_times


def setup_report(app: Sphinx) -> None:
    app.connect("build-finished", write_execution_times)
