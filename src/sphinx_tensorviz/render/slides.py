"""Slides: figures in a reveal.js deck written by sphinx-revealjs's ``revealjs`` builder.

That builder is an HTML builder whose translator is the HTML one with sections turned into slides
(``format == "html"``), so a deck gets the HTML rendering of every figure, its CSS and its scripts.
What differs is the reader: a lecturer advances with the keyboard, and a slide is meant to be
seen whole (``tensorviz-slides.css`` lets a taller one scroll rather than cut it off). So a figure
on a slide is its prompt, then the picture at slide size as the slide's next step (a reveal.js
*fragment*, where a page has a ``<details>`` to open), then the answer to its choices, then its
title and provenance; the reading aids under a figure on a page (long description, data table,
outline, downloads, printed output, source panels, enlarged views) are left out. A tour's steps
are fragments shown one at a time (``tensorviz-slides.js`` marks the current step's node on the
graph and zooms a graph drawn small in on it).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

from .assemble import Prompt
from .footer import PROVENANCE_CLASSES
from .html_nodes import markup, tv_html_caption, tv_html_figure
from .parts import FigureParts
from .svg import ID_TOKEN

#: the builders of sphinx-revealjs (its ``revealjs`` and its one-folder-per-page ``dirrevealjs``)
SLIDE_BUILDERS = frozenset({"revealjs", "dirrevealjs"})
#: reveal.js's classes of a step shown on the next key press and hidden again on the one after
ONE_AT_A_TIME = ("fragment", "current-visible")
#: what a deck links besides the figures' own assets, after them (``static/tensorviz/``)
SLIDE_CSS = "tensorviz/tensorviz-slides.css"
SLIDE_JS = "tensorviz/tensorviz-slides.js"


def is_slides(builder: Any) -> bool:
    """Whether ``builder`` writes reveal.js slides."""
    return getattr(builder, "name", None) in SLIDE_BUILDERS


def slide_figure(parts: FigureParts, figure_id: str, classes: list[str], prompt: Prompt,
                 footer: str) -> nodes.Element:
    """A figure on a slide: the question first, the picture as the next step when there is a question,
    the answer to its choices as the step after (the class looks at the picture before being told),
    then the title and provenance; the page's reading aids are left out."""
    figure = tv_html_figure(ids=[figure_id], classes=[*classes, "tv-slide-figure"])
    svg = parts.svg.replace(ID_TOKEN, figure_id)
    picture = nodes.container(classes=["tv-slide-picture"])
    picture += markup(f'<div class="tv-svg">{svg}</div>')  # sized to the slide by tensorviz-slides.css
    if prompt.prediction:
        figure.extend(prompt.before())  # the choices as a lettered list: the audience answers aloud
        picture["classes"].append("fragment")
    figure += picture
    answer = prompt.answer()
    if answer:
        figure += nodes.container("", *answer, classes=["tv-slide-answer", "fragment"])
    caption = tv_html_caption()
    caption += nodes.paragraph("", "", nodes.strong("", parts.title), classes=["tv-title"])
    caption += nodes.paragraph("", footer, classes=list(PROVENANCE_CLASSES))
    figure += caption
    return figure


def body_into_last_slide(document: nodes.document) -> None:
    """Move what follows a section's subsections (the lesson's credits are added there) to the end of
    its last subsection: sphinx-revealjs writes it between two slides, where reveal.js shows nothing."""
    for section in list(document.findall(nodes.section)):
        subsections = [n for n, child in enumerate(section.children) if isinstance(child, nodes.section)]
        if not subsections or subsections[-1] == len(section.children) - 1:
            continue
        last = section.children[subsections[-1]]
        trailing = section.children[subsections[-1] + 1:]
        del section.children[subsections[-1] + 1:]
        last.extend(trailing)  # sections come in document order: ``last`` is looked at after this one


def slide_of(node: nodes.Node) -> nodes.Node | None:
    """The section whose slide shows ``node``: sphinx-revealjs makes a slide of each section of the
    first two levels (a deeper one is part of its level-2 slide); ``None`` before the first heading."""
    sections = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section):
            sections.append(parent)
        parent = parent.parent
    return sections[-2] if len(sections) >= 2 else (sections[0] if sections else None)
