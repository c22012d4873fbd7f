"""Replace each ``tensorviz_figure`` with the figure for the current builder.

Runs at write time (a post-transform, for every builder), after the execution
phase has filled the store. Missing, failed and corrupt artifacts become a
located warning and a visible box on the page; the build goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.osutil import relative_uri

from ..config import app_of, settings
from ..core.hashing import digest
from ..core.limits import Limits, data_size_problem
from ..core.nodes import tensorviz_figure
from ..core.request import ExecutionRequest
from ..core.state import lessons_of, trusted_of
from ..core.sweep import Sweep
from ..read.lesson_directive import tensorviz_catalogue, tensorviz_lesson
from ..read.steps_directive import (
    tensorviz_activations,
    tensorviz_step,
    tensorviz_steps,
)
from ..store.artifacts import ArtifactStore, StoreProblem
from ..warnings_ import Subtype, failure_subtype, warn
from .assemble import Prompt, html_figure, latex_figure, plain_figure
from .bidi import isolate_text_nodes
from .cache import RenderCache
from .choices import confirmation_of
from .downloads import downloads_list, write_downloads
from .footer import provenance_line
from .graph import diagram_footer, diagram_parts, graph_parts
from .heatmap import heatmap_parts
from .lesson import catalogue, lesson_footer, lesson_header, write_thumbnail
from .parts import FigureParts
from .svg import ID_TOKEN
from .sweep import sweep_parts
from .sweep_figures import per_point, point_figure_id, switcher
from .tour import GraphOnPage, activations_figure, steps_figure


@dataclass(frozen=True)
class RenderContext:
    cache: RenderCache
    srcdir: Path
    outdir: Path | None = None  #: where figures may write files next to the page (HTML only)
    page: str = ""  #: the page's target URI, for relative links to those files


PartsMaker = Callable[[dict[str, Any], dict[str, Any], str, RenderContext], FigureParts]

#: directive name -> renderer of its artifacts
RENDERERS: dict[str, PartsMaker] = {"tv-heatmap": heatmap_parts, "tv-graph": graph_parts}

_TRACEBACK_LINES = 8


class RenderFigures(SphinxPostTransform):
    default_priority = 200

    @property
    def builder(self) -> Any:
        return app_of(self.env).builder

    def run(self, **kwargs: Any) -> None:
        conf = settings(app_of(self.env))
        self.limits = Limits.from_settings(conf)
        store = ArtifactStore.for_settings(conf, trusted_of(self.env))
        builder = self.builder
        scripted = builder.format == "html" and not builder.name.startswith("epub")
        ctx = RenderContext(RenderCache(Path(self.env.doctreedir) / "tensorviz-figures"), Path(self.env.srcdir),
                            Path(builder.outdir) if scripted else None, builder.get_target_uri(self.env.docname))
        self.swept_graphs: dict[str, tuple[str, Sweep] | None] = {}  # graph name -> (figure id, sweep)
        graphs = self.graphs_on_page(store)
        markers = self.tour_markers(graphs)
        html = self.builder.format == "html"
        for stray in list(self.document.findall(tensorviz_step)):
            if not isinstance(stray.parent, tensorviz_steps):
                warn("tv-step only works inside a tv-steps block", Subtype.option, location=stray)
                stray.replace_self([])
        for tour in list(self.document.findall(tensorviz_steps)):
            graph = self.graph_for(tour, graphs, "tv-steps")
            tour.replace_self(_isolated(steps_figure(tour, graph, html)) if graph else [])
        for strips in list(self.document.findall(tensorviz_activations)):
            graph = self.graph_for(strips, graphs, "tv-activations")
            strips.replace_self(_isolated(self.activations(strips, graph, store, ctx, html)) if graph else [])
        self.lesson_pages(store, ctx)
        for node in list(self.document.findall(tensorviz_figure)):
            node.replace_self(_isolated(self.figure(node, store, ctx, conf.mode, markers)))

    def tour_markers(self, graphs: dict[str, GraphOnPage | None]) -> dict[str, dict[str, list[list[Any]]]]:
        """graph name -> visible box id -> [[step number, title], ...] for every tour on the page."""
        found: dict[str, dict[str, list[list[Any]]]] = {}
        for tour in self.document.findall(tensorviz_steps):
            graph = graphs.get(tour["graph"])
            if graph is None:
                continue
            boxes = found.setdefault(tour["graph"], {})
            steps = [s for s in tour.children if isinstance(s, tensorviz_step)]
            for number, step in enumerate(steps, start=1):
                node_id = graph.resolve(step["target"])
                if node_id is not None:
                    boxes.setdefault(graph.anchor(node_id)[0], []).append([number, step["title"]])
        return found

    def lesson_pages(self, store: ArtifactStore, ctx: RenderContext) -> None:
        """Lesson headers, the credits footer, and catalogues of every lesson."""
        for header in list(self.document.findall(tensorviz_lesson)):
            footer = lesson_footer(header["meta"])
            if footer is not None:
                self.document.children[-1] += footer
            header.replace_self(lesson_header(header))
        catalogues = list(self.document.findall(tensorviz_catalogue))
        if not catalogues:
            return
        lessons = lessons_of(self.env)
        order = [d for d in self.env.found_docs if d in lessons]
        toc = _toc_order(self.env, self.env.config.root_doc)
        order.sort(key=lambda d: (toc.index(d) if d in toc else len(toc), d))
        entries = [{"docname": d, "title": self.env.titles[d].astext() if d in self.env.titles else d, **lessons[d]}
                   for d in order]
        builder = self.builder
        for node in catalogues:
            node.replace_self(catalogue(
                entries,
                lambda d: builder.get_relative_uri(self.env.docname, d),
                lambda d: self.thumbnail(d, lessons[d].get("previewRequest"), store, ctx),
            ))

    def thumbnail(self, docname: str, request: ExecutionRequest | None, store: ArtifactStore,
                  ctx: RenderContext) -> str | None:
        builder = self.builder
        if request is None or builder.format != "html":
            return None
        artifact = store.read_artifact(request.content_hash)
        if not isinstance(artifact, dict) or data_size_problem(artifact["data"], self.limits):
            return None
        # a graph's thumbnail is its top level only: a readable outline at thumbnail size
        render = {**request.render, "depth": 1} if request.directive == "tv-graph" else request.render
        key = digest({"thumbnail": request.renderer_hash, **render})
        parts = RENDERERS[request.directive](artifact, render, key, replace(ctx, outdir=None))
        relative = write_thumbnail(parts.svg.replace(ID_TOKEN, f"preview-{request.content_hash[:8]}"),
                                   Path(builder.outdir), docname)
        return relative_uri(builder.get_target_uri(self.env.docname), relative)

    def graphs_on_page(self, store: ArtifactStore) -> dict[str, GraphOnPage | None]:
        """Named ``tv-graph`` figures of this page (``None`` where the artifact is missing)."""
        found: dict[str, GraphOnPage | None] = {}
        for node in self.document.findall(tensorviz_figure):
            request = node["request"]
            if request is None or request.directive != "tv-graph":
                continue
            artifact = store.read_artifact(request.content_hash)
            usable = artifact if isinstance(artifact, dict) and not data_size_problem(artifact["data"], self.limits) \
                else None  # the figure itself says why it is not drawn
            # a swept graph: tours and links go to its first point's figure
            figure_id = node["figure_id"] if node.get("sweep") is None else point_figure_id(node["figure_id"], 0)
            for name in node["names"]:
                found[name] = usable and GraphOnPage(
                    figure_id, usable, request.render.get("depth", 2), tuple(request.render.get("expand", ()))
                )
                self.swept_graphs[name] = (node["figure_id"], node["sweep"]) if node.get("sweep") else None
        return found

    def activations(self, strips: tensorviz_activations, graph: GraphOnPage, store: ArtifactStore,
                    ctx: RenderContext, html: bool) -> nodes.Node:
        """Activation strips; for a swept graph one set per point, following the graph's controls."""
        owner = self.swept_graphs.get(strips["graph"])
        if owner is None:
            return activations_figure(strips, graph, html, ctx.cache)
        graph_id, sweep = owner

        def draw(copy: nodes.Element, number: int) -> nodes.Node:
            found = store.read_artifact(sweep.points[number].request.content_hash)
            if not isinstance(found, dict):  # the graph's own figure warns about it
                return nodes.paragraph("", "This point has not been computed.")
            point = GraphOnPage(point_figure_id(graph_id, number), found, graph.depth, graph.expand)
            return activations_figure(copy, point, html, ctx.cache)

        return switcher(strips["figure_id"], [], sweep, per_point(strips, sweep, draw), html,
                        follows=graph_id)

    def graph_for(self, node: nodes.Element, graphs: dict[str, GraphOnPage | None], what: str) -> GraphOnPage | None:
        name = node["graph"]
        if name not in graphs:
            known = ", ".join(sorted(graphs)) or "none on this page"
            warn(f"{what}: no tv-graph named {name!r} on this page (named graphs: {known})", Subtype.target,
                 location=node)
            return None
        return graphs[name]  # None: the graph itself already warns about its missing artifact

    def figure(self, node: tensorviz_figure, store: ArtifactStore, ctx: RenderContext, mode: str,
               markers: dict[str, dict[str, list[list[Any]]]]) -> nodes.Node:
        request: ExecutionRequest | None = node["request"]
        if request is None:  # an authored diagram: nothing was executed
            render = node["render"]
            parts = diagram_parts(node["diagram"], render, ctx.cache)
            return self.layout(node, parts, self.prompt(node, {"prediction": node["diagram"].get("prediction"),
                                                               **render}, None),
                               diagram_footer(node["diagram"]), "tv-diagram", f"diagram-{node['figure_id']}")
        if node.get("sweep") is not None and request.directive == "tv-graph":
            figures = per_point(node, node["sweep"], lambda copy, _: self.figure(copy, store, ctx, mode, markers))
            return switcher(node["figure_id"], node["ids"], node["sweep"], figures, self.builder.format == "html",
                            prompt=self.prompt(node, request.render, None))
        if node.get("sweep") is not None:
            return self.swept(node, node["sweep"], store, ctx, mode)
        found = store.read_artifact(request.content_hash)
        if isinstance(found, StoreProblem) or found is None:
            return self.missing(node, request, store, mode, found)
        too_big = data_size_problem(found["data"], self.limits)
        if too_big:  # e.g. a committed artifact from before the limit, or from elsewhere
            warn(f"{request.directive}: the stored artifact is not drawn: {too_big}", Subtype.limit, location=node)
            return error_box(f"This figure is not drawn: {too_big}", "")
        render, renderer_hash = request.render, request.renderer_hash
        tour = next((markers[name] for name in node["names"] if markers.get(name)), None)
        if tour:  # a guided tour on this page numbers its stops on the graph
            render = {**render, "markers": tour}
            renderer_hash = digest({"renderer": renderer_hash, "markers": tour})
        parts = RENDERERS[request.directive](found, render, renderer_hash, ctx)
        if found["stdout"].strip():
            parts.details.append(printed_output(found["stdout"]))
        if self.builder.format == "html" and not self.builder.name.startswith("epub"):
            parts.details.append(self.downloads(found, parts, request.inline_code))  # e-readers cannot run code
        for check in found.get("checks", []):
            if not check["passed"]:
                warn(f"{request.directive}: claim failed: {check['description']}"
                     + (f" ({check['detail']})" if check.get("detail") else ""), Subtype.claim, location=node)
        return self.layout(node, parts, self.prompt(node, request.render, found.get("checks", [])),
                           provenance_line(found),
                           request.directive, f"{request.content_hash[:16]}-{renderer_hash[:8]}")

    def swept(self, node: tensorviz_figure, sweep: Sweep, store: ArtifactStore, ctx: RenderContext,
              mode: str) -> nodes.Node:
        """A figure with ``:sweep:``: every point's artifact, and the cross-sweep check's."""
        artifacts = []
        for point in sweep.points:
            found = store.read_artifact(point.request.content_hash)
            if not isinstance(found, dict):
                return self.missing(node, point.request, store, mode, found)
            artifacts.append(found)
        check, problem = None, None
        if sweep.check is not None:
            found = store.read_artifact(sweep.check.content_hash)
            if isinstance(found, dict):
                check = found
            else:  # warns like a missing figure; the points are still shown
                problem = self.missing(node, sweep.check, store, mode, found).astext()
        rendering = sweep_parts(sweep, artifacts, check, problem, ctx)
        for message, subtype in rendering.warnings:
            warn(message, subtype, location=node)
        first = sweep.points[0].request
        footer = f"{len(artifacts)} recorded runs, one per point (hashes listed with each); the first: " \
                 + provenance_line(artifacts[0])
        key = digest({"points": [p.request.content_hash for p in sweep.points], "renderer": first.renderer_hash})
        prompt = self.prompt(node, first.render, check["checks"] if check else None)
        return self.layout(node, rendering.parts, prompt, footer, first.directive, key[:24])

    def prompt(self, node: tensorviz_figure, render: dict[str, Any], checks: list[dict[str, Any]] | None) -> Prompt:
        """The question before the figure; warns when ``:choices-check:`` does not confirm the marked answer."""
        confirmation, problem = confirmation_of(render.get("choices-check"), checks or [])
        if problem and checks is not None:
            warn(f"{node['request'].directive if node['request'] else 'tv-graph'}: {problem}", Subtype.claim,
                 location=node)
        return Prompt(render.get("prediction"), render.get("choices"), confirmation)

    def layout(self, node: tensorviz_figure, parts: FigureParts, prompt: Prompt, footer: str,
               kind: str, key: str) -> nodes.Node:
        """Place the parts for the current builder's format."""
        fmt = self.builder.format
        if fmt == "html":
            figure = html_figure(parts, node["figure_id"], [*node["classes"], kind], prompt, footer)
        elif fmt == "latex":
            figure = latex_figure(parts, Path(self.builder.outdir), f"tensorviz-{key}.pdf", prompt, footer)
        else:
            figure = plain_figure(parts, prompt, footer)
        figure["ids"] = [node["figure_id"], *node["ids"]]
        figure["names"] = node["names"]
        for number, table in enumerate(figure.findall(nodes.table)):
            table["ids"] = [f"{node['figure_id']}-table-{number}"]
        return figure

    def downloads(self, artifact: dict[str, Any], parts: FigureParts, inline_code: str | None) -> nodes.Element:
        builder = self.builder
        folder, files = write_downloads(artifact, parts.svg.replace(ID_TOKEN, "preview"), Path(self.env.srcdir),
                                        Path(builder.outdir), inline_code)
        page = builder.get_target_uri(self.env.docname)
        return downloads_list(files, lambda name: relative_uri(page, f"{folder}/{name}"))

    def missing(self, node: tensorviz_figure, request: ExecutionRequest, store: ArtifactStore, mode: str,
                problem: StoreProblem | None) -> nodes.Node:
        failure = store.read_failure(request.content_hash)
        if failure is not None:
            subtype = failure_subtype(failure["subtype"])
            tail = "\n".join(failure["traceback"].splitlines()[-_TRACEBACK_LINES:])
            message = failure["message"] or "the lesson code failed without a message"
            what = "result refused" if subtype is Subtype.limit else "lesson code failed"
            warn(f"{request.directive}: {what}: {message}" + (f"\n{tail}" if tail else ""), subtype, location=node)
            return error_box(f"This figure could not be computed: {message}", tail)
        if problem is not None:
            message = f"stored artifact {problem.path.name} {problem.reason}"
            warn(f"{request.directive}: {message}", Subtype.store, location=node)
            return error_box(f"This figure could not be shown: {message}", "")
        if mode != "off":
            warn(f"{request.directive}: no stored artifact {request.content_hash[:12]} and "
                 f"tensorviz_execution_mode is {mode!r}; build once with 'auto' and commit the store",
                 Subtype.cache_miss, location=node)
        note = nodes.note(classes=["tv-placeholder"])
        note += nodes.paragraph("", f"This figure has not been computed yet (execution mode {mode!r}; "
                                    f"content hash {request.content_hash[:12]}).")
        return note


def _isolated(made: Any) -> Any:
    """Figures built from artifacts, with directional overrides in their texts isolated."""
    for node in made if isinstance(made, list) else [made]:
        isolate_text_nodes(node)
    return made


def _toc_order(env: Any, root: str) -> list[str]:
    """Documents in table-of-contents order, depth first from ``root``."""
    order: list[str] = []
    stack = [root]
    while stack:
        docname = stack.pop(0)
        if docname in order:
            continue
        order.append(docname)
        stack[:0] = env.toctree_includes.get(docname, [])
    return order


def printed_output(stdout: str) -> nodes.Element:
    """What the lesson code printed while it ran, as recorded (long output keeps its end)."""
    lines = stdout.rstrip().splitlines()
    shown = "\n".join(lines[-40:])
    box = nodes.container(classes=["tv-stdout"])
    box += nodes.paragraph("", "", nodes.strong("", "Printed by the code"))
    box += nodes.literal_block(shown, shown)
    return box


def error_box(message: str, traceback: str) -> nodes.Element:
    box = nodes.error(classes=["tv-error"])
    box += nodes.paragraph("", message)
    if traceback:
        box += nodes.literal_block(traceback, traceback, classes=["tv-traceback"])
    return box
