"""The figure detail: write one figure's files next to its page and list them under it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ...core.request import TRAINED
from ...render.page import Page
from ...render.parts import FigureParts
from ...render.svg import ID_TOKEN
from ...warnings_ import Subtype, warn
from .checked import RefusedDownload
from .files import downloads_list, write_downloads


def downloads(page: Page, node: nodes.Element, artifact: dict[str, Any], parts: FigureParts) -> nodes.Node | None:
    """The files of one figure, written next to its page, and the list that links them (none, with a
    located warning, when the artifact's fields cannot be trusted in a download)."""
    request = node["request"]
    if not page.scripted or TRAINED in request.options:
        # a figure of a trained model (``:model: @name``): run.py would build the model untrained (the
        # weights are not part of the download), and its --check would fail, so it offers none
        return None
    builder = page.builder
    try:
        folder, files = write_downloads(artifact, page.store.artifact_text(request.content_hash, artifact),
                                        parts.svg.replace(ID_TOKEN, "preview"), page.ctx.srcdir,
                                        Path(builder.outdir), request.inline_code)
    except RefusedDownload as exc:
        warn(f"{request.directive}: stored artifact {request.content_hash[:12]}: {exc}; the figure is shown "
             "without its downloads", Subtype.store, location=node)
        return None
    uri = builder.get_target_uri(page.docname)
    return downloads_list(files, lambda name: relative_uri(uri, f"{folder}/{name}"))
