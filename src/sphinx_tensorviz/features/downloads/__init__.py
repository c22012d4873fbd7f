""""Reproduce this figure": under every executed HTML figure, the files to run it again elsewhere.

The model files, a generated ``run.py`` (:mod:`sphinx_tensorviz.execute.reproduce`), a pinned
``requirements.txt``, the figure's SVG and the artifact, each with its sha256 and size
(:mod:`.files`). Not in e-books: their readers neither run code nor open downloads.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ...render.registry import add_figure_detail, lazy


def setup_downloads(app: Sphinx) -> None:
    add_figure_detail(app, lazy(f"{__name__}.detail:downloads"))
