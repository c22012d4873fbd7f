""""Download notebook": a line under the page's title linking the lesson's notebook and its zip."""

from __future__ import annotations

from pathlib import PurePath
from string import Formatter

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ...config import app_of
from ...core.i18n import _
from ...render.page import Page
from .write import enabled, lesson_pages, notebook_files


def link_notebook(page: Page) -> None:
    if not page.scripted or not enabled(app_of(page.env)) or page.docname not in lesson_pages(page.env):
        return
    uri = page.builder.get_target_uri(page.docname)
    ipynb, archive = notebook_files(page.docname)
    line = nodes.paragraph(classes=["tv-notebook-download"])
    links = {"notebook": nodes.reference("", PurePath(ipynb).name, refuri=relative_uri(uri, ipynb)),
             "archive": nodes.reference("", PurePath(archive).name, refuri=relative_uri(uri, archive))}
    # one message with the two links as fields, so a translation may place them where its grammar does
    words = _("Download notebook: {notebook} (its figures as recorded) or {archive} (the notebook with the "
              "lesson's code files, to run it: unzip it, open the notebook in its folder, run all cells).")
    for text, field in _fields(words):
        line += nodes.Text(text) if field is None else links[field]
    section = next(iter(page.document.findall(nodes.section)), None)
    title = section.next_node(nodes.title) if section is not None else None
    if title is not None and title.parent is section:
        section.insert(section.index(title) + 1, line)
    else:
        page.document.insert(0, line)


def _fields(words: str) -> list[tuple[str, str | None]]:
    """``words`` as its text pieces and its ``{field}`` names, in order (``(text, None)`` or ``("", name)``)."""
    pieces: list[tuple[str, str | None]] = []
    for text, field, _spec, _conversion in Formatter().parse(words):
        if text:
            pieces.append((text, None))
        if field:
            pieces.append(("", field))
    return pieces
