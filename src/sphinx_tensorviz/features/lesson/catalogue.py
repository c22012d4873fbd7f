"""The page pass of lessons: headers and credits on lesson pages, and every ``tv-catalogue``.

A catalogue lists every page that has a ``tv-lesson`` in table-of-contents order, each with a
thumbnail of its preview figure (drawn by the figure's own kind, a graph at its top level).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from sphinx.util.osutil import relative_uri

from ...core.hashing import digest
from ...core.i18n import course_words
from ...core.request import ExecutionRequest
from ...core.state import lessons_of
from ...render.cache import artifact_key
from ...render.page import Page
from ...render.svg import ID_TOKEN
from ...render.words import translated_language
from .directive import tensorviz_catalogue, tensorviz_lesson, translated_meta
from .render import catalogue, lesson_footer, lesson_header, write_thumbnail


def render_lessons(page: Page) -> None:
    """Lesson headers, the credits footer, and catalogues of every lesson."""
    document = page.document
    for header in list(document.findall(tensorviz_lesson)):
        header["meta"] = translated_meta(header["meta"], page.ctx.words)
        footer = lesson_footer(header["meta"])
        if footer is not None:
            document.children[-1] += footer
        header.replace_self(lesson_header(header))
    catalogues = list(document.findall(tensorviz_catalogue))
    if not catalogues:
        return
    env, builder = page.env, page.builder
    lessons = lessons_of(env)
    order = [d for d in env.found_docs if d in lessons]
    toc = toc_order(env, env.config.root_doc)
    order.sort(key=lambda d: (toc.index(d) if d in toc else len(toc), d))
    translated = translated_language(env.config)
    entries = [{"docname": d, "title": env.titles[d].astext() if d in env.titles else d,
                **(translated_meta(lessons[d], course_words(env, d)) if translated else lessons[d])}
               for d in order]
    for node in catalogues:
        node.replace_self(catalogue(
            entries,
            lambda d: builder.get_relative_uri(page.docname, d),
            lambda d: thumbnail(page, d, lessons[d].get("previewRequest")),
        ))


def thumbnail(page: Page, docname: str, request: ExecutionRequest | None) -> str | None:
    """The URL of the lesson's preview SVG (HTML only), drawn by its figure kind."""
    if request is None or not page.html or request.directive not in page.registry.executed:
        return None
    artifact = page.usable(page.store.read_artifact(request.content_hash))
    if artifact is None:
        return None
    kind = page.registry.executed[request.directive]
    render = {**request.render, **kind.thumbnail_render}
    key = digest({"thumbnail": request.renderer_hash, **render})
    # the preview is the only part used: kept in the drawing cache, so a fresh output folder
    # copies it instead of making every part of the figure (outline, tables, sources) again
    recording = artifact_key(artifact, page.store.stored_sha256(request.content_hash, artifact))
    drawn = page.ctx.cache.svg(recording, digest({"preview": key}),  # not the parts' own entry
                               lambda: kind.entry("parts")(artifact, render, key, replace(page.ctx, outdir=None)).svg)
    relative = write_thumbnail(drawn.replace(ID_TOKEN, f"preview-{request.content_hash[:8]}"),
                               Path(page.builder.outdir), docname)
    return relative_uri(page.builder.get_target_uri(page.docname), relative)


def toc_order(env: Any, root: str) -> list[str]:
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
