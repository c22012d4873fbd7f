"""A traced graph as :class:`~sphinx_tensorviz.render.parts.FigureParts`.

It gets: the SVG of the default view (collapsed to ``:depth:``), a nested list as its text
alternative, a note that only the executed branch is recorded (and, for torch.compile code,
that the eager graph is shown), and (HTML) the model source with
line anchors that the nodes link to (:mod:`.sources`), plus a link to per-module layout data
(:mod:`sphinx_tensorviz.features.graph.frames`) so readers can open any module.
"""

from __future__ import annotations

import html
import json
from functools import cache, partial
from typing import Any

from docutils import nodes
from sphinx.util.osutil import relative_uri

from ...core.hashing import digest
from ...core.i18n import N_, _, counted
from ...render.cache import artifact_key
from ...render.checks import checks_list
from ...render.html_nodes import markup
from ...render.parts import FigureParts
from ...render.svg import ID_TOKEN
from .frames import frame_files, write_frame_files
from .layout import layout_graph
from .outline import OutlineItem, graph_outline, outline_from_json, outline_to_json
from .pdf import graph_pdf
from .sources import source_line_href, source_panels
from .svg import graph_to_svg

BRANCH_NOTE = N_(
    "This graph records one forward pass with the inputs shown: only the branch of Python control "
    "flow that actually ran is drawn."
)
COMPILED_NOTE = N_(
    "This model runs code compiled with torch.compile. The graph shows the eager code as it is written; "
    "the compiled program may fuse, reorder or drop these operations."
)


def graph_alt(graph: dict[str, Any], depth: int) -> str:
    layers = [n for n in graph["layers"] if n["kind"] == "layer"]
    modules = [n for n in graph["layers"] if n["kind"] == "module"]
    top = [n["id"] for n in graph["layers"] if n["parent"] is None and n["kind"] in ("layer", "module")]
    shape = graph.get("output", {}).get("shape")
    flow = (_("from the input to an output of shape {shape}").format(shape="×".join(map(str, shape))) if shape
            else _("from the input"))
    return _("Computation graph of one forward pass: {layers} in {modules}, {flow}. Top level, in order: {top}. "
             "Modules deeper than level {depth} are drawn collapsed.").format(
        layers=counted(len(layers), "layer or op", "layers and ops"),
        modules=counted(len(modules), "module", "modules"),
        flow=flow, top=", ".join(top), depth=depth)


def step_markers(render: dict[str, Any]) -> dict[str, list[tuple[int, str]]]:
    """The guided-tour numbers to draw on the graph: visible box id -> (step number, title)."""
    return {box: [(int(n), str(t)) for n, t in steps] for box, steps in render.get("markers", {}).items()}


def graph_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    """The default view (SVG, outline, PDF: one layout, computed only when a cache misses), and
    on HTML pages the per-module layout data that lets readers open any module."""
    graph = artifact["data"]
    depth, expand = render.get("depth", 2), tuple(render.get("expand", ()))
    recording = artifact_key(artifact)
    layout = cache(lambda: layout_graph(graph, depth=depth, expand=expand))
    title = render.get("title") or _("Computation graph of {model}").format(model=graph.get("modelFile")
                                                                             or _("the model"))
    alt = render.get("alt") or graph_alt(graph, depth)
    markers = step_markers(render)
    panels = source_panels(ctx.srcdir, artifact, render.get("show-source", False))
    href = partial(source_line_href, shown=frozenset(panels))
    drawn = digest({"renderer": renderer_hash, "panels": sorted(panels)})  # links depend on the panels shown
    svg = ctx.cache.svg(recording, drawn, lambda: graph_to_svg(
        graph, layout(), id_prefix=ID_TOKEN, title=title, desc=alt, source_href=href, markers=markers,
        preview=render.get("preview", False)))
    outline_json = ctx.cache.text(recording, drawn, "outline.json", lambda: json.dumps(
        outline_to_json(graph_outline(graph, depth=depth, expand=expand, layout=layout())), ensure_ascii=False))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", _(BRANCH_NOTE), classes=["tv-branch-note"]))
    if graph.get("compiled"):
        details.append(nodes.paragraph("", _(COMPILED_NOTE), classes=["tv-compiled-note"]))
    outline = nodes.container(classes=["tv-outline"])
    outline += nodes.paragraph("", "", nodes.strong("", _("The graph as a list")))
    outline += outline_list(outline_from_json(json.loads(outline_json)))
    details.append(outline)
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    extra = []
    outdir = getattr(ctx, "outdir", None)
    if outdir is not None:
        key = f"{recording[:16]}-{drawn[:12]}"
        frames = ctx.cache.text(recording, drawn, "frames.json",
                                lambda: json.dumps(frame_files(graph, key, href), ensure_ascii=False))
        folder = write_frame_files(json.loads(frames), key, outdir)
        data_href = relative_uri(ctx.page, folder + "/")
        extra.append(markup(f'<span class="tv-graph-data" hidden="" data-src="{html.escape(data_href, quote=True)}" '
                            f'data-key="{key}"></span>'))
    extra.extend(panels.values())
    return FigureParts(
        title=title, alt=alt, svg=svg, details=details,
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
