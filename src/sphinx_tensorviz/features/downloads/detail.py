"""The figure detail: write one figure's files next to its page and list them under it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ...render.page import Page
from ...render.parts import FigureParts
from ...render.svg import ID_TOKEN
from .files import downloads_list, write_downloads


def downloads(page: Page, node: nodes.Element, artifact: dict[str, Any], parts: FigureParts) -> nodes.Node | None:
    """The files of one figure, written next to its page, and the list that links them."""
    if not page.scripted:
        return None
    builder = page.builder
    request = node["request"]
    folder, files = write_downloads(artifact, page.store.artifact_text(request.content_hash, artifact),
                                    parts.svg.replace(ID_TOKEN, "preview"), page.ctx.srcdir, Path(builder.outdir),
                                    request.inline_code)
    uri = builder.get_target_uri(page.docname)
    return downloads_list(files, lambda name: relative_uri(uri, f"{folder}/{name}"))
