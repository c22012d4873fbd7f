"""The lesson header (question, description, category, tags, milestone, limitations), the page
footer (attribution, license) and the course catalogue with preview thumbnails.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from docutils import nodes

from ...core.i18n import _
from ...render.outputs import OUTPUT_FOLDER, write_if_changed
from .directive import tensorviz_lesson


def lesson_header(node: tensorviz_lesson) -> nodes.Element:
    meta = node["meta"]
    box = nodes.container(classes=["tv-lesson"])
    if "question" in meta:
        box += _labelled(_("Question"), meta["question"], "tv-question")
    box.extend(child.deepcopy() for child in node.children)
    facts = nodes.field_list(classes=["tv-lesson-facts"])
    if "category" in meta:
        facts += _field(_("Category"), nodes.Text(meta["category"]))
    if meta.get("tags"):
        facts += _field(_("Tags"), nodes.Text(", ".join(meta["tags"])))
    if "milestone" in meta:
        facts += _field(_("Milestone"), milestone_node(meta["milestone"]))
    if len(facts):
        box += facts
    if "limitations" in meta:
        box += _labelled(_("Limitations"), meta["limitations"], "tv-limitations")
    return box


def milestone_node(milestone: dict[str, Any]) -> nodes.paragraph:
    para = nodes.paragraph()
    details = ", ".join(str(milestone[k]) for k in ("year", "kind") if k in milestone)
    para += nodes.Text(milestone["name"] + (f" ({details})" if details else ""))
    if milestone.get("fidelity"):
        para += nodes.Text(". " + _("Our version: {fidelity}").format(fidelity=milestone["fidelity"]))
    for paper in milestone.get("papers", []):
        para += nodes.Text(" · " + _("Paper: "))
        para += nodes.reference("", paper["title"], refuri=paper["url"])
    return para


def lesson_footer(meta: dict[str, Any]) -> nodes.Element | None:
    parts = [_("{label}: ").format(label=label) + meta[key]
             for key, label in (("attribution", _("Attribution")), ("license", _("License"))) if key in meta]
    if not parts:
        return None
    return nodes.paragraph("", " · ".join(parts), classes=["tv-lesson-footer"])


def catalogue(entries: list[dict[str, Any]], link: Callable[[str], str], thumbnail: Callable[[str], str | None]
              ) -> nodes.Element:
    """One entry per lesson: linked title, category and tags, question, and a preview image."""
    items = nodes.bullet_list(classes=["tv-catalogue"])
    for entry in entries:
        item = nodes.list_item(classes=["tv-catalogue-entry"])
        src = thumbnail(entry["docname"])
        if src:
            item += nodes.image(uri=src, alt=_("Preview of the main figure of {lesson}").format(lesson=entry["title"]),
                                classes=["tv-thumbnail"], candidates={"*": src}, width="240px")
        title = nodes.paragraph(classes=["tv-catalogue-title"])
        title += nodes.reference("", "", nodes.strong("", entry["title"]), internal=True, refuri=link(entry["docname"]))
        item += title
        facts = [entry[k] for k in ("category",) if k in entry] + [", ".join(entry.get("tags", []))]
        item += nodes.paragraph("", " · ".join(f for f in facts if f), classes=["tv-catalogue-facts"])
        if "question" in entry:
            item += _labelled(_("Question"), entry["question"], "tv-question")
        items += item
    return items


def write_thumbnail(svg: str, outdir: Path, docname: str) -> str:
    """Save a lesson's preview SVG and return its path relative to the output folder."""
    relative = f"{OUTPUT_FOLDER}/previews/{docname.replace('/', '--')}.svg"
    write_if_changed(outdir / relative, ('<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n").encode("utf-8"))
    return relative


def _labelled(label: str, text: str, cls: str) -> nodes.paragraph:
    para = nodes.paragraph(classes=[cls])
    para += nodes.strong("", _("{label}: ").format(label=label))
    para += nodes.Text(text)
    return para


def _field(name: str, body: nodes.Node) -> nodes.field:
    field = nodes.field()
    field += nodes.field_name("", name)
    content = nodes.field_body()
    content += body if isinstance(body, nodes.paragraph) else nodes.paragraph("", "", body)
    field += content
    return field
