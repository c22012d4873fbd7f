"""Traced graphs and authored diagrams as :class:`FigureParts`.

A traced graph gets: the SVG of the default view (collapsed to ``:depth:``), a
nested list as its text alternative, a note that only the executed branch is
recorded, and (HTML) the model source with line anchors that the nodes link to.
"""

from __future__ import annotations

import html
from functools import partial
from pathlib import Path
from typing import Any

from docutils import nodes

from ..store.hashing import digest, sha256_text
from .cache import RenderCache, artifact_key
from .diagram_svg import diagram_to_svg
from .graph_layout import GraphLayout, layout_graph
from .graph_svg import OutlineItem, graph_outline, graph_to_svg
from .checks import checks_list
from .latex import diagram_pdf, graph_pdf
from .parts import FigureParts
from .svg import ID_TOKEN

MAX_EXPANDED_VIEWS = 12

BRANCH_NOTE = (
    "This graph records one forward pass with the inputs shown: only the branch of Python control "
    "flow that actually ran is drawn."
)


def graph_alt(graph: dict[str, Any], layout: GraphLayout) -> str:
    layers = [n for n in graph["layers"] if n["kind"] == "layer"]
    modules = [n for n in graph["layers"] if n["kind"] == "module"]
    top = [n["id"] for n in graph["layers"] if n["parent"] is None and n["kind"] in ("layer", "module")]
    shape = graph.get("output", {}).get("shape")
    out = f" to an output of shape {'×'.join(map(str, shape))}" if shape else ""
    return (
        f"Computation graph of one forward pass: {len(layers)} layers and ops in {len(modules)} modules, "
        f"from the input{out}. Top level, in order: {', '.join(top)}. "
        f"Modules deeper than level {layout.depth} are drawn collapsed."
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


def source_line_href(node: dict[str, Any]) -> str | None:
    line = (node.get("source") or {}).get("line")
    return f"#{ID_TOKEN}-L{line}" if line else None


def graph_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    graph = artifact["data"]
    layout = layout_graph(graph, depth=render.get("depth", 2), expand=tuple(render.get("expand", ())))
    title = render.get("title") or f"Computation graph of {graph.get('modelFile', 'the model')}"
    alt = render.get("alt") or graph_alt(graph, layout)
    svg = ctx.cache.svg(
        artifact_key(artifact), renderer_hash,
        partial(graph_to_svg, graph, layout, id_prefix=ID_TOKEN, title=title, desc=alt, source_href=source_line_href,
                markers=step_markers(render)),
    )
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", BRANCH_NOTE, classes=["tv-branch-note"]))
    outline = nodes.container(classes=["tv-outline"])
    outline += nodes.paragraph("", "", nodes.strong("", "The graph as a list"))
    outline += outline_list(graph_outline(graph, depth=layout.depth, expand=layout.expand))
    details.append(outline)
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    extra = [expanded_views(graph, layout, title, alt, artifact_key(artifact), renderer_hash, ctx.cache,
                            step_markers(render))]
    model_file = project_file(ctx.srcdir, artifact["request"])
    if model_file is not None:
        extra.append(source_panel(model_file, artifact["request"]["entry"], render.get("show-source", False)))
    return FigureParts(
        title=title, alt=alt, svg=svg, details=details, wide=layout.width > 640,
        draw_pdf=lambda path: graph_pdf(layout, path, step_markers(render)), extra_html=extra,
    )


def expanded_views(graph: dict[str, Any], layout: GraphLayout, title: str, alt: str, recording: str,
                   renderer_hash: str, cache: RenderCache, markers: dict[str, list[tuple[int, str]]]) -> nodes.raw:
    """The default view with one collapsed module opened, per module, as inert ``<template>``s.

    The script swaps them in when a reader expands a module, so the layout is still computed at
    build time (deterministic, no layout engine in the browser). Capped at
    :data:`MAX_EXPANDED_VIEWS` so a huge graph does not multiply the page size.
    """
    markup = []
    collapsed = [box.id for box in layout.boxes if box.collapsed][:MAX_EXPANDED_VIEWS]
    for number, module in enumerate(collapsed):
        expand = (*layout.expand, module)
        key = digest({"renderer": renderer_hash, "expand": list(expand)})

        def draw(expand: tuple[str, ...] = expand, number: int = number, module: str = module) -> str:
            view = layout_graph(graph, depth=layout.depth, expand=expand)  # only when not cached
            return graph_to_svg(graph, view, id_prefix=f"{ID_TOKEN}-x{number}", title=f"{title} ({module} expanded)",
                                desc=alt, source_href=source_line_href, markers=markers)

        svg = cache.svg(recording, key, draw)
        markup.append(f'<template class="tv-graph-variant" data-expands="{html.escape(module, quote=True)}">'
                      f"{svg}</template>")
    return nodes.raw("", "".join(markup), format="html")


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


def source_panel(path: Path, shown: str, open_: bool) -> nodes.raw:
    """The model source with one anchor per line (``#<figure>-L<n>``) for node links and highlights."""
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError:
        lines = []
    body = "".join(
        f'<span class="tv-line" id="{ID_TOKEN}-L{n}" data-line="{n}"><span class="tv-lineno" aria-hidden="true">'
        f"{n:>4} </span>{html.escape(line)}\n</span>"
        for n, line in enumerate(lines, start=1)
    )
    markup = (
        f'<details class="tv-source"{" open" if open_ else ""}><summary>Model source: '
        f"<code>{html.escape(shown)}</code></summary>"
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

