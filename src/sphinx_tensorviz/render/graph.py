"""Traced graphs and authored diagrams as :class:`FigureParts`.

A traced graph gets: the SVG of the default view (collapsed to ``:depth:``), a
nested list as its text alternative, a note that only the executed branch is
recorded, and (HTML) the model source with line anchors that the nodes link to,
plus a link to per-module layout data (:mod:`.graph_frames`) so readers can open
any module.
"""

from __future__ import annotations

import html
import json
from functools import cache, partial
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ..core.hashing import digest, sha256_text
from .cache import RenderCache, artifact_key
from .checks import checks_list
from .diagram_svg import diagram_to_svg
from .graph_frames import write_frame_files
from .graph_layout import layout_graph
from .graph_outline import (
    OutlineItem,
    graph_outline,
    outline_from_json,
    outline_to_json,
)
from .graph_svg import graph_to_svg
from .ids import slugify
from .parts import FigureParts
from .pdf import diagram_pdf, graph_pdf
from .svg import ID_TOKEN

BRANCH_NOTE = (
    "This graph records one forward pass with the inputs shown: only the branch of Python control "
    "flow that actually ran is drawn."
)


def graph_alt(graph: dict[str, Any], depth: int) -> str:
    layers = [n for n in graph["layers"] if n["kind"] == "layer"]
    modules = [n for n in graph["layers"] if n["kind"] == "module"]
    top = [n["id"] for n in graph["layers"] if n["parent"] is None and n["kind"] in ("layer", "module")]
    shape = graph.get("output", {}).get("shape")
    out = f" to an output of shape {'×'.join(map(str, shape))}" if shape else ""
    return (
        f"Computation graph of one forward pass: {len(layers)} layers and ops in {len(modules)} modules, "
        f"from the input{out}. Top level, in order: {', '.join(top)}. "
        f"Modules deeper than level {depth} are drawn collapsed."
    )


def step_markers(render: dict[str, Any]) -> dict[str, list[tuple[int, str]]]:
    """The guided-tour numbers to draw on the graph: visible box id -> (step number, title)."""
    return {box: [(int(n), str(t)) for n, t in steps] for box, steps in render.get("markers", {}).items()}


def project_file(srcdir: Path, request: dict[str, Any]) -> Path | None:
    """The model file the artifact was made from, if it is still the same file inside the project.

    The path comes from a committed artifact (data from the repository): it is shown only if it
    resolves inside the source folder and its text still has the recorded sha256.
    """
    entry = request["entry"]
    root = srcdir.resolve()
    path = (srcdir / entry).resolve()
    if entry == "<inline>" or not path.is_relative_to(root) or not path.is_file():
        return None
    recorded = request["files"].get(entry)
    return path if recorded == sha256_text(path.read_text("utf-8")) else None


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
    """``<figure>-L12`` in the model file, ``<figure>-<file slug>-L12`` in any other file."""
    return f"{ID_TOKEN}-L{line}" if not key else f"{ID_TOKEN}-{slugify(key)}-L{line}"


def graph_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    """The default view (SVG, outline, PDF: one layout, computed only when a cache misses), and
    on HTML pages the per-module layout data that lets readers open any module."""
    graph = artifact["data"]
    depth, expand = render.get("depth", 2), tuple(render.get("expand", ()))
    recording = artifact_key(artifact)
    layout = cache(lambda: layout_graph(graph, depth=depth, expand=expand))
    title = render.get("title") or f"Computation graph of {graph.get('modelFile', 'the model')}"
    alt = render.get("alt") or graph_alt(graph, depth)
    markers = step_markers(render)
    panels = source_panels(ctx.srcdir, artifact, render.get("show-source", False))
    href = partial(source_line_href, shown=frozenset(panels))
    drawn = digest({"renderer": renderer_hash, "panels": sorted(panels)})  # links depend on the panels shown
    svg = ctx.cache.svg(recording, drawn, lambda: graph_to_svg(
        graph, layout(), id_prefix=ID_TOKEN, title=title, desc=alt, source_href=href, markers=markers))
    outline_json = ctx.cache.text(recording, drawn, "outline.json", lambda: json.dumps(
        outline_to_json(graph_outline(graph, depth=depth, expand=expand, layout=layout())), ensure_ascii=False))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", BRANCH_NOTE, classes=["tv-branch-note"]))
    outline = nodes.container(classes=["tv-outline"])
    outline += nodes.paragraph("", "", nodes.strong("", "The graph as a list"))
    outline += outline_list(outline_from_json(json.loads(outline_json)))
    details.append(outline)
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    extra = []
    outdir = getattr(ctx, "outdir", None)
    if outdir is not None:
        key = f"{recording[:16]}-{drawn[:12]}"
        folder = write_frame_files(graph, key, outdir, href)
        data_href = relative_uri(ctx.page, folder + "/")
        extra.append(nodes.raw("", f'<span class="tv-graph-data" hidden="" data-src="{html.escape(data_href, quote=True)}" '
                                   f'data-key="{key}"></span>', format="html"))
    extra.extend(panels.values())
    return FigureParts(
        title=title, alt=alt, svg=svg, details=details, wide=True,
        draw_pdf=lambda path: graph_pdf(layout(), path, markers), extra_html=extra,
    )


def outline_list(items: list[OutlineItem] | tuple[OutlineItem, ...]) -> nodes.bullet_list:
    """Nested bullet lists: read by screen readers, and by the text and man builders."""
    bullets = nodes.bullet_list(classes=["tv-outline-list"])
    for item in items:
        entry = nodes.list_item(ids=[], classes=["tv-outline-item"])
        entry["data-node"] = item.id
        entry += nodes.paragraph("", item.text)
        if item.children:
            entry += outline_list(item.children)
        bullets += entry
    return bullets


def source_panels(srcdir: Path, artifact: dict[str, Any], open_: bool) -> dict[str, nodes.raw]:
    """Every source panel of a traced graph, by file key (``""`` is the model file).

    The model file and the author's other files are read from the project, only when they are
    still the recorded files (same sha256); library files come from the artifact's excerpts,
    shown read-only with their package, version and license.
    """
    request = artifact["request"]
    panels: dict[str, nodes.raw] = {}
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


def source_panel(path: Path, shown: str, open_: bool, *, key: str = "") -> nodes.raw:
    """A project file with one anchor per line (``#<figure>-L<n>``) for node links and highlights."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError:
        lines = []
    summary = ("Model source: " if not key else "Source: ") + f"<code>{html.escape(shown)}</code>"
    return _panel(summary, shown, list(enumerate(lines, start=1)), key, open_, "tv-source")


def library_panel(key: str, info: dict[str, Any]) -> nodes.raw:
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
           classes: str) -> nodes.raw:
    body = "".join(
        f'<span class="tv-line" id="{line_anchor(key, n)}" data-line="{n}"><span class="tv-lineno" '
        f'aria-hidden="true">{n:>4} </span>{html.escape(line)}\n</span>' if n is not None
        else f'<span class="tv-line tv-gap">{html.escape(line)}\n</span>'
        for n, line in numbered
    )
    markup = (
        f'<details class="{classes}"{" open" if open_ else ""} data-file="{html.escape(key, quote=True)}">'
        f"<summary>{summary}</summary>"
        f'<div class="tv-scroll" tabindex="0" role="region" aria-label="Source of {html.escape(shown, quote=True)}">'
        f'<pre class="tv-source-code">{body}</pre></div></details>'
    )
    return nodes.raw("", markup, format="html")


def diagram_parts(diagram: dict[str, Any], render: dict[str, Any], cache: RenderCache) -> FigureParts:
    """An authored diagram: drawn as given, with its reading as the long description."""
    merged = {**diagram, **{k: v for k, v in render.items() if k in ("title", "alt")}}
    title = merged.get("title") or "Diagram"
    alt = merged.get("alt") or merged.get("reading") or title
    merged.update(title=title, alt=alt)
    key = digest(merged)
    svg = cache.svg(key, key, partial(diagram_to_svg, merged, id_prefix=ID_TOKEN))
    details: list[nodes.Node] = []
    for text in (render.get("description"), diagram.get("reading")):
        if text:
            details.append(nodes.paragraph("", text, classes=["tv-longdesc"]))
    return FigureParts(title=title, alt=alt, svg=svg, details=details, draw_pdf=lambda path: diagram_pdf(merged, path))


def diagram_footer(diagram: dict[str, Any]) -> str:
    scope = diagram.get("scope")
    return "Authored diagram, not a recorded computation" + (f" · {scope}" if scope else "")

