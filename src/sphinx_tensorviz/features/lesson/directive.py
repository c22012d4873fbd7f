"""``tv-lesson`` (a lesson's metadata: question, category, tags, milestone, limitations, credits)
and ``tv-catalogue`` (every lesson of the course, generated from that metadata).

Metadata is kept per document in ``env.tensorviz_lessons`` so the catalogue can
be written after every lesson has been read, whatever the ``-j`` setting.
"""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ...core.i18n import TranslatableWords, Words
from ...core.state import catalogues_of, lessons_of
from ...read import options as opt
from ...read.front_matter import as_written
from ...warnings_ import Subtype, warn

#: a lesson's metadata that holds the author's words (``milestone`` holds them in its ``fidelity``)
TEXT_META = ("question", "category", "limitations", "attribution", "license")


class tensorviz_lesson(nodes.General, nodes.Element, TranslatableWords):  # noqa: N801
    """Attribute ``meta``; children: the parsed description (translated as prose)."""

    def author_texts(self) -> list[str]:
        meta = self["meta"]
        fidelity = [meta["milestone"]["fidelity"]] if meta.get("milestone", {}).get("fidelity") else []
        return [meta[name] for name in TEXT_META if isinstance(meta.get(name), str) and meta[name]] + fidelity


def translated_meta(meta: dict[str, Any], words: Words) -> dict[str, Any]:
    """A lesson's metadata with the author's words (:data:`TEXT_META`) in the page's language."""
    done = {name: words(meta[name]) for name in TEXT_META if isinstance(meta.get(name), str) and meta[name]}
    if meta.get("milestone", {}).get("fidelity"):
        done["milestone"] = {**meta["milestone"], "fidelity": words(meta["milestone"]["fidelity"])}
    return {**meta, **done}


class tensorviz_catalogue(nodes.General, nodes.Element):  # noqa: N801
    """Replaced by the list of lessons when pages are written."""


def milestone(argument: str | None) -> dict[str, Any]:
    value = opt.yaml_mapping(argument)
    if "name" not in value:
        raise ValueError("a milestone needs at least a name, e.g. {name: LLaMA, year: 2023, papers: [...]}")
    value["name"] = str(value["name"])
    for paper in value.get("papers", []):
        if not isinstance(paper, dict) or "title" not in paper or "url" not in paper:
            raise ValueError("each paper needs a title and a url")
        if not str(paper["url"]).startswith(("https://", "http://")):
            raise ValueError(f"paper url {paper['url']!r} must be an http(s) link")
    return value


class LessonDirective(SphinxDirective):
    """The lesson header; the body is the description (MyST)."""

    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "question": directives.unchanged_required,
        "category": directives.unchanged,
        "tags": directives.unchanged,
        "milestone": directives.unchanged,
        "limitations": directives.unchanged,
        "attribution": directives.unchanged,
        "license": directives.unchanged,
        "preview": directives.unchanged,
    }
    converters: ClassVar[dict[str, Any]] = {
        "question": opt.text, "category": opt.text, "tags": opt.name_list_commas, "milestone": milestone,
        "limitations": opt.text, "attribution": opt.text, "license": opt.text, "preview": opt.text,
    }

    def run(self) -> list[nodes.Node]:
        meta: dict[str, Any] = {}
        for name, raw in as_written(self.options, self.block_text).items():
            try:
                meta[name] = self.converters[name](raw)
            except ValueError as exc:
                warn(f"tv-lesson: :{name}: {exc}", Subtype.option, location=(self.env.docname, self.lineno))
        if "question" not in meta:
            warn("tv-lesson: every lesson needs a :question: (what the learner should find out)",
                 Subtype.option, location=(self.env.docname, self.lineno))
        node = tensorviz_lesson(meta=meta)
        self.set_source_info(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        meta["description"] = " ".join(node.astext().split())
        if "preview" in meta:
            meta["preview"] = nodes.fully_normalize_name(meta["preview"])
        lessons_of(self.env)[self.env.docname] = meta
        return [node]


class CatalogueDirective(SphinxDirective):
    """Lists every page that has a ``tv-lesson``, in table-of-contents order."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        node = tensorviz_catalogue()
        self.set_source_info(node)
        catalogues_of(self.env)[self.env.docname] = True
        return [node]
