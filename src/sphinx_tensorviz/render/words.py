"""A page's figures in the build's language (:mod:`..core.i18n` says which words come from where).

The artifacts stay as they were recorded (in the author's language, and named by a content hash
that no language changes): a figure's words are translated when its page is written. The render
options that hold the author's words are translated in each figure's request before anything is
drawn, and the language joins the renderer hash, so drawings and kept parts are kept per language.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..core.i18n import Words, translated_render, untranslated
from ..core.nodes import tensorviz_figure
from ..core.request import ExecutionRequest


def translated_language(config: Any) -> str | None:
    """The language figures are written in, when it is not the extension's own (English)."""
    language = config.language
    return language if language and language != "en" else None


def translate_figure(node: tensorviz_figure, words: Words, language: str) -> None:
    """Give the figure node requests whose render options are in ``language`` (a copy of the page's
    doctree is written: the environment keeps the author's words)."""

    def translated(request: ExecutionRequest) -> ExecutionRequest:
        return replace(request, render={**translated_render(request.render, words), "language": language})

    if node.get("request") is not None:
        node["request"] = translated(node["request"])
    else:
        node["render"] = translated_render(node.get("render", {}), words)
    sweep = node.get("sweep")
    if sweep is not None:
        points = tuple(replace(point, request=translated(point.request)) for point in sweep.points)
        node["sweep"] = replace(sweep, points=points)


def shown_artifact(artifact: dict[str, Any], words: Words) -> dict[str, Any]:
    """The artifact as the page shows it: its claims' descriptions in the page's language."""
    if words is untranslated or not artifact.get("checks"):
        return artifact
    return {**artifact, "checks": [{**c, "description": words(c["description"])} for c in artifact["checks"]]}


def note_artifact_words(page: Any) -> None:
    """For ``sphinx-build -b gettext``: add the words each figure shows from its artifacts (its
    claims' descriptions) to the figure's messages, so the page's ``.pot`` has them. Figures are
    not drawn for a message catalogue."""
    for node in page.document.findall(tensorviz_figure):
        if node.get("request") is None:
            continue
        sweep = node.get("sweep")
        requests = ([p.request for p in sweep.points] + ([sweep.check] if sweep.check is not None else [])
                    if sweep is not None else [node["request"]])
        found = [page.store.read_artifact(r.content_hash) for r in requests]
        node["tv_messages"] = list(dict.fromkeys(
            check["description"] for artifact in found if isinstance(artifact, dict)
            for check in artifact.get("checks", ())))
