""""Download notebook": a line under the page's title linking the lesson's notebook and its zip."""

from __future__ import annotations

from pathlib import PurePath

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ...config import app_of
from ...render.page import Page
from .write import enabled, lesson_pages, notebook_files


def link_notebook(page: Page) -> None:
    if not page.scripted or not enabled(app_of(page.env)) or page.docname not in lesson_pages(page.env):
        return
    uri = page.builder.get_target_uri(page.docname)
    ipynb, archive = notebook_files(page.docname)
    line = nodes.paragraph(classes=["tv-notebook-download"])
    line += nodes.Text("Download notebook: ")
    line += nodes.reference("", PurePath(ipynb).name, refuri=relative_uri(uri, ipynb))
    line += nodes.Text(" (its figures as recorded) or ")
    line += nodes.reference("", PurePath(archive).name, refuri=relative_uri(uri, archive))
    line += nodes.Text(" (the notebook with the lesson's code files, to run it: unzip it, open the notebook "
                       "in its folder, run all cells).")
    section = next(iter(page.document.findall(nodes.section)), None)
    title = section.next_node(nodes.title) if section is not None else None
    if title is not None and title.parent is section:
        section.insert(section.index(title) + 1, line)
    else:
        page.document.insert(0, line)
