"""The source panels of a traced graph: the model file and the other files its nodes come from.

Each panel is a ``<details>`` with one anchor per line, so a node's box links to its line and the
page script highlights it. Project files are read from the course only while they are still the
recorded files; library files come from the excerpts the artifact carries (read-only, with their
package, version and license), so a build without the library shows them too.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ...core.i18n import _
from ...core.locations import recorded_project_file
from ...render.html_nodes import tv_html_markup
from ...render.ids import line_id
from ...render.svg import ID_TOKEN


def project_file(srcdir: Path, request: dict[str, Any]) -> Path | None:
    """The model file the artifact was made from, if it is still the same file inside the project.

    The path comes from a committed artifact (data from the repository): it is shown only if it
    resolves inside the source folder and its text still has the recorded sha256.
    """
    entry = request["entry"]
    return None if entry == "<inline>" else recorded_project_file(srcdir, entry, request["files"].get(entry))


def source_line_href(node: dict[str, Any], shown: frozenset[str] = frozenset({""})) -> str | None:
    """The in-page link to a node's source line, when a panel for its file is on the page.

    ``shown`` holds the file keys with a panel (``""`` is the model file itself).
    """
    source = node.get("source") or {}
    line, key = source.get("line"), source.get("file", "")
    if not isinstance(line, int) or not isinstance(key, str) or key not in shown:
        return None
    return f"#{line_anchor(key, line)}"


def line_anchor(key: str, line: int) -> str:
    """A line's id in the figure's panels (the figure id is :data:`~sphinx_tensorviz.render.svg.ID_TOKEN`
    until the figure is placed on its page)."""
    return line_id(ID_TOKEN, key, line)


def source_panels(srcdir: Path, artifact: dict[str, Any], open_: bool) -> dict[str, tv_html_markup]:
    """Every source panel of a traced graph, by file key (``""`` is the model file).

    The model file and the author's other files are read from the project, only when they are
    still the recorded files (same sha256); library files come from the artifact's excerpts,
    shown read-only with their package, version and license.
    """
    request = artifact["request"]
    panels: dict[str, tv_html_markup] = {}
    model_file = project_file(srcdir, request)
    if model_file is not None:
        panels[""] = source_panel(model_file, request["entry"], open_)
    files = artifact["data"].get("sources")
    for key, info in (files.items() if isinstance(files, dict) else ()):
        if not isinstance(info, dict) or not isinstance(key, str) or not key:
            continue
        if info.get("kind") == "project":
            path = project_file(srcdir, {"entry": key, "files": request["files"]})
            if path is not None:
                panels[key] = source_panel(path, key, False, key=key)
        elif info.get("kind") == "library":
            panels[key] = library_panel(key, info)
    return panels


def source_panel(path: Path, shown: str, open_: bool, *, key: str = "") -> tv_html_markup:
    """A project file with one anchor per line (``#<figure>-L<n>``) for node links and highlights."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError:
        lines = []
    summary = (_("Model source: ") if not key else _("Source: ")) + f"<code>{html.escape(shown)}</code>"
    return _panel(summary, shown, list(enumerate(lines, start=1)), key, open_, "tv-source")


def library_panel(key: str, info: dict[str, Any]) -> tv_html_markup:
    """The referenced functions of a library file, carried by the artifact, read-only."""
    numbered: list[tuple[int | None, str]] = []
    for excerpt in info.get("excerpts") or ():
        start, lines = excerpt.get("start"), excerpt.get("lines")
        if not isinstance(start, int) or not isinstance(lines, list):
            continue
        if numbered:
            numbered.append((None, "…"))
        numbered.extend((start + i, str(text)) for i, text in enumerate(lines))
    about = " ".join(str(info.get(k)) for k in ("package", "version") if info.get(k))
    if info.get("license"):
        about += f", license: {info['license']}"
    summary = (f"Library source (read-only): <code>{html.escape(key)}</code>"
               + (f' <span class="tv-source-about">{html.escape(about)}</span>' if about else ""))
    return _panel(summary, key, numbered, key, False, "tv-source tv-source-library")


def _panel(summary: str, shown: str, numbered: list[tuple[int | None, str]], key: str, open_: bool,
           classes: str) -> tv_html_markup:
    body = "".join(
        f'<span class="tv-line" id="{line_anchor(key, n)}" data-line="{n}"><span class="tv-lineno" '
        f'aria-hidden="true">{n:>4} </span>{html.escape(line)}\n</span>' if n is not None
        else f'<span class="tv-line tv-gap">{html.escape(line)}\n</span>'
        for n, line in numbered
    )
    region = html.escape(_("Source of {file}").format(file=shown), quote=True)
    markup = (
        f'<details class="{classes}"{" open" if open_ else ""} data-file="{html.escape(key, quote=True)}">'
        f"<summary>{summary}</summary>"
        f'<div class="tv-scroll" tabindex="0" role="region" aria-label="{region}">'
        f'<pre class="tv-source-code">{body}</pre></div></details>'
    )
    return tv_html_markup(markup=markup)
