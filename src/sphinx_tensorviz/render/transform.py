"""Replace each ``tensorviz_figure`` with the figure for the current builder.

Runs at write time (from the post-transform :class:`.post_transform.RenderFigures`, for every
builder), after the execution phase has filled the store. What is common to every figure kind lives here: the features' page passes run first
(tours, activations, lesson headers; see :mod:`.registry`), then each figure is drawn by its kind
and laid out for the builder, with its prompt, details and provenance footer. Missing, failed
and corrupt artifacts become a located warning and a visible box on the page; the build goes on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.builders.gettext import MessageCatalogBuilder

from ..config import app_of, settings
from ..core.hashing import digest
from ..core.i18n import _, course_catalogue, course_words, untranslated, words_identity
from ..core.limits import Limits, data_size_problem
from ..core.nodes import error_box, tensorviz_figure
from ..core.request import ExecutionRequest
from ..core.sweep import Sweep
from ..core.words import plural
from ..store.artifacts import StoreProblem
from ..store.build import build_store
from ..warnings_ import Subtype, failure_subtype, warn
from .assemble import Prompt, html_figure, latex_figure, plain_figure
from .bidi import isolated
from .cache import RenderCache, drawing_cache_folder
from .choices import confirmation_of
from .footer import provenance_line
from .frameworks import framework_figure
from .page import Page, RenderContext
from .part_cache import Drawn, for_page
from .parts import FigureParts
from .registry import registry
from .slides import body_into_last_slide, is_slides, slide_figure
from .sweep_figures import per_point, switcher
from .tables import captions_before_tables
from .words import note_artifact_words, shown_artifact, translate_figure, translated_language

#: a crash's or a timeout's output: its last lines. A lesson's traceback is folded already (its
#: frames, one line for the library's): shown whole up to _FOLDED_LINES, from its header
_TRACEBACK_LINES = 8
_FOLDED_LINES = 40


def render_document(document: nodes.document, env: Any) -> None:
    """Every figure of ``document`` for the builder of ``env`` (called by :class:`.post_transform.RenderFigures`)."""
    app = app_of(env)
    conf = settings(app)
    builder = app.builder
    # files next to the page (a graph's module frames), for pages read in a browser; a deck links none
    scripted = builder.format == "html" and not builder.name.startswith("epub") and not is_slides(builder)
    drawings = RenderCache(drawing_cache_folder(conf.drawing_cache, Path(env.doctreedir)))
    language = translated_language(env.config)
    words = course_words(env, env.docname) if language else untranslated
    identity = words_identity(language, course_catalogue(env, env.docname)) if language else ""
    ctx = RenderContext(drawings, Path(env.srcdir), Path(builder.outdir) if scripted else None,
                        builder.get_target_uri(env.docname), words, identity)
    page = Page(document, env, builder, build_store(env, conf), ctx, Limits.from_settings(conf), conf.mode,
                registry(app))
    if isinstance(builder, MessageCatalogBuilder):  # a message catalogue: the figures' words, nothing drawn
        note_artifact_words(page)
        return
    if language:
        for node in document.findall(tensorviz_figure):
            translate_figure(node, words, identity)
    page.kept = for_page(page)  # the kinds' parts kept as HTML, for HTML builders
    for _order, page_pass in page.registry.passes:
        page_pass(page)
    for node in list(document.findall(tensorviz_figure)):
        node.replace_self(isolated(figure(page, node)))
    if page.slides:
        body_into_last_slide(document)
    if builder.format == "man":
        captions_before_tables(document)


def figure(page: Page, node: tensorviz_figure) -> nodes.Node:
    """One figure, from its artifact (or, for an authored kind, from the page), for this builder."""
    request: ExecutionRequest | None = node["request"]
    if request is None:  # an authored figure: nothing was executed
        authored = page.registry.authored[node["authored"]](node, page.ctx)
        return layout(page, node, authored.parts, prompt(node, authored.prompt, None), authored.footer,
                      authored.kind, f"{authored.kind.removeprefix('tv-')}-{node['figure_id']}")
    if node.get("frameworks") is not None:  # ``:frameworks:``: compared, then drawn as one framework's
        return framework_figure(page, node, node["frameworks"], figure, missing)
    kind = page.registry.executed[request.directive]
    sweep: Sweep | None = node.get("sweep")
    if sweep is not None and not kind.sweep:  # each point drawn as a figure of its own
        figures = per_point(node, sweep, lambda copy, _point: figure(page, copy))
        return switcher(node["figure_id"], node["ids"], sweep, figures, page.html,
                        prompt=prompt(node, request.render, None))
    if sweep is not None:
        return swept(page, node, sweep)
    found = page.store.read_artifact(request.content_hash)
    if isinstance(found, StoreProblem) or found is None:
        return missing(page, node, request, found)
    too_big = data_size_problem(found["data"], page.limits)
    if too_big:  # e.g. a committed artifact from before the limit, or from elsewhere
        warn(f"{request.directive}: the stored artifact is not drawn: {too_big}", Subtype.limit, location=node)
        return error_box(_("This figure is not drawn: {problem}").format(problem=too_big), "")
    render, renderer_hash = request.render, request.renderer_hash
    notes = next((page.render_notes[name] for name in node["names"] if page.render_notes.get(name)), None)
    if notes:  # e.g. a guided tour on this page numbers its stops on the graph
        render = {**render, **notes}
        renderer_hash = digest({"renderer": renderer_hash, **notes})
    shown = shown_artifact(found, page.ctx.words)

    def make() -> FigureParts:
        """The kind's parts, with what the figure adds from its artifact: printed output, details."""
        parts = kind.entry("parts")(shown, render, renderer_hash, page.ctx)
        if found["stdout"].strip():
            parts.details.append(printed_output(found["stdout"]))
        for detail in page.registry.details if not page.slides else ():  # e.g. the downloads, next to the page
            made = detail(page, node, found, parts)
            if made is not None:
                parts.details.append(made)
        return parts

    drawn = (page.kept.draw(node, [found], {"directive": request.directive, "render": render, "renderer": renderer_hash},
                            make) if page.kept is not None else Drawn(make()))
    parts = drawn.parts
    for message, subtype in parts.warnings:
        warn(f"{request.directive}: {message}", subtype, location=node)
    for check in found.get("checks", []):
        if not check["passed"]:
            warn(f"{request.directive}: claim failed: {check['description']}"
                 + (f" ({check['detail']})" if check.get("detail") else ""), Subtype.claim, location=node)
    made = layout(page, node, parts, prompt(node, request.render, shown.get("checks", [])),
                  provenance_line(found) + node.get("footer_note", ""), request.directive,
                  f"{request.content_hash[:16]}-{renderer_hash[:8]}")
    drawn.keep(isolated(made))  # kept as the page shows it: with its texts isolated
    return made


def swept(page: Page, node: tensorviz_figure, sweep: Sweep) -> nodes.Node:
    """A figure with ``:sweep:`` drawn whole by its kind: every point's artifact, and the cross-sweep
    check's."""
    artifacts = []
    for point in sweep.points:
        found = page.store.read_artifact(point.request.content_hash)
        if not isinstance(found, dict):
            return missing(page, node, point.request, found)
        artifacts.append(found)
    check, problem = None, None
    if sweep.check is not None:
        found = page.store.read_artifact(sweep.check.content_hash)
        if isinstance(found, dict):
            check = found
        else:  # warns like a missing figure; the points are still shown
            problem = missing(page, node, sweep.check, found).astext()
    first = sweep.points[0].request

    def make() -> FigureParts:  # the sweep's warnings are given at the figure, as the parts' are
        words = page.ctx.words
        rendering = page.registry.executed[first.directive].entry("sweep")(
            sweep, [shown_artifact(a, words) for a in artifacts], check and shown_artifact(check, words), problem,
            page.ctx)
        return replace(rendering.parts, warnings=list(rendering.warnings))

    named_by = {"directive": first.directive, "sweep": sweep, "problem": problem, "renderer": first.renderer_hash}
    drawn = (page.kept.draw(node, [*artifacts, *([check] if check else [])], named_by, make)
             if page.kept is not None else Drawn(make()))
    for message, subtype in drawn.parts.warnings:
        warn(message, subtype, location=node)
    footer = _("{count} recorded runs, one per point (hashes listed with each); the first: {footer}").format(
        count=len(artifacts), footer=provenance_line(artifacts[0]))
    key = digest({"points": [p.request.content_hash for p in sweep.points], "renderer": first.renderer_hash})
    made = layout(page, node, drawn.parts,
                  prompt(node, first.render, shown_artifact(check, page.ctx.words)["checks"] if check else None),
                  footer, first.directive, key[:24])
    drawn.keep(isolated(made))  # kept as the page shows it: with its texts isolated
    return made


def prompt(node: tensorviz_figure, render: dict[str, Any], checks: list[dict[str, Any]] | None) -> Prompt:
    """The question before the figure; warns when ``:choices-check:`` does not confirm the marked answer."""
    confirmation, problem = confirmation_of(render.get("choices-check"), checks or [])
    if problem and checks is not None and node["request"] is not None:  # only executed figures have claims
        warn(f"{node['request'].directive}: {problem}", Subtype.claim, location=node)
    return Prompt(render.get("prediction"), render.get("choices"), confirmation)


def layout(page: Page, node: tensorviz_figure, parts: FigureParts, question: Prompt, footer: str,
           kind: str, key: str) -> nodes.Node:
    """Place the parts for the current builder's format."""
    fmt = page.builder.format
    if fmt == "html":
        made = (slide_figure if page.slides else html_figure)(parts, node["figure_id"], [*node["classes"], kind],
                                                              question, footer)
    elif fmt == "latex":
        made = latex_figure(parts, Path(page.builder.outdir), f"tensorviz-{key}.pdf", question, footer)
    else:
        made = plain_figure(parts, question, footer)
    made["ids"] = [node["figure_id"], *node["ids"]]
    made["names"] = node["names"]
    for number, table in enumerate(made.findall(nodes.table)):
        table["ids"] = [f"{node['figure_id']}-table-{number}"]
    return made


def missing(page: Page, node: tensorviz_figure, request: ExecutionRequest, problem: StoreProblem | None) -> nodes.Node:
    """Why a figure has no artifact, on the page and as a located warning."""
    failure = page.store.read_failure(request.content_hash)
    if failure is not None:
        subtype = failure_subtype(failure["subtype"])
        tail = traceback_excerpt(failure["traceback"])
        message = failure["message"] or "the lesson code failed without a message"
        what = "result refused" if subtype is Subtype.limit else "lesson code failed"
        warn(f"{request.directive}: {what}: {message}" + (f"\n{tail}" if tail else ""), subtype, location=node)
        return error_box(_("This figure could not be computed: {problem}").format(problem=message), tail)
    if problem is not None:
        message = f"stored artifact {problem.path.name} {problem.reason}"
        warn(f"{request.directive}: {message}", Subtype.store, location=node)
        return error_box(_("This figure could not be shown: {problem}").format(problem=message), "")
    if page.mode in ("auto", "force"):  # it would have run: something before it stopped it, and said why
        warn(f"{request.directive}: no stored artifact {request.content_hash[:12]}: it was not computed in this "
             "build (the warning given for it when the build executed says why)", Subtype.cache_miss, location=node)
    elif page.mode != "off":
        warn(f"{request.directive}: no stored artifact {request.content_hash[:12]} and "
             f"tensorviz_execution_mode is {page.mode!r}; build once with 'auto' and commit the store",
             Subtype.cache_miss, location=node)
    note = nodes.note(classes=["tv-placeholder"])
    note += nodes.paragraph("", _("This figure has not been computed yet (execution mode {mode}; content hash "
                                  "{hash}).").format(mode=repr(page.mode), hash=request.content_hash[:12]))
    return note


def traceback_excerpt(text: str) -> str:
    """What the warning and the error box show of a failure's traceback: a traceback keeps its header
    and is cut only at a frame (the innermost kept), never mid-frame; any other output its last lines."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("Traceback ("):
        return "\n".join(lines[-_TRACEBACK_LINES:])
    limit = _FOLDED_LINES if lines[0].startswith("Traceback (your code first") else _TRACEBACK_LINES + 4
    if len(lines) <= limit:
        return text.rstrip("\n")
    tail = lines[len(lines) - limit + 2:]
    start = next((n for n, line in enumerate(tail) if line.startswith("  File ")), 0)
    return "\n".join([lines[0], f"  [{plural(len(lines) - len(tail) + start - 1, 'line')} of outer frames: tensorviz show]",
                      *tail[start:]])


def printed_output(stdout: str) -> nodes.Element:
    """What the lesson code printed while it ran, as recorded (long output keeps its end)."""
    lines = stdout.rstrip().splitlines()
    shown = "\n".join(lines[-40:])
    box = nodes.container(classes=["tv-stdout"])
    box += nodes.paragraph("", "", nodes.strong("", _("Printed by the code")))
    # output, not code: never highlighted or numbered as the page's code is
    box += nodes.literal_block(shown, shown, language="text", linenos=False)
    return box


