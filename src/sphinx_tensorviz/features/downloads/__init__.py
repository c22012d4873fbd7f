""""Reproduce this figure": under every executed HTML figure, the files to run it again elsewhere.

The model files, a generated ``run.py`` (:mod:`sphinx_tensorviz.execute.reproduce`), a pinned
``requirements.txt``, the figure's SVG and the artifact, each with its sha256 and size
(:mod:`.files`). Not in e-books: their readers neither run code nor open downloads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.osutil import relative_uri

from ...render.page import Page
from ...render.parts import FigureParts
from ...render.registry import add_figure_detail
from ...render.svg import ID_TOKEN
from .files import downloads_list, write_downloads


def setup_downloads(app: Sphinx) -> None:
    add_figure_detail(app, downloads)


def downloads(page: Page, node: nodes.Element, artifact: dict[str, Any], parts: FigureParts) -> nodes.Node | None:
    """The files of one figure, written next to its page, and the list that links them."""
    if not page.scripted:
        return None
    builder = page.builder
    folder, files = write_downloads(artifact, parts.svg.replace(ID_TOKEN, "preview"), page.ctx.srcdir,
                                    Path(builder.outdir), node["request"].inline_code)
    uri = builder.get_target_uri(page.docname)
    return downloads_list(files, lambda name: relative_uri(uri, f"{folder}/{name}"))
