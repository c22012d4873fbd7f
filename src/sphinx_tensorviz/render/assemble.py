"""Lay :class:`FigureParts` out for one builder: HTML, LaTeX, or anything else.

HTML: ``<figure>`` with the prediction prompt first, the picture inside a native
``<details>`` (revealed without JavaScript), then the description and a caption
with the provenance footer. LaTeX: the same order with a PDF. Other builders
(text, man, texinfo, ...): the prompt, the alt text, the description and the
table, all as plain docutils nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes

from ..core.i18n import _
from .choices import answers, choices_form, choices_list
from .footer import PROVENANCE_CLASSES
from .html_nodes import (
    markup,
    scroll_region,
    tv_html_caption,
    tv_html_figure,
    tv_html_markup,
    tv_html_reveal,
    tv_html_scroll,
)
from .latex import tv_latex_graphic, tv_latex_grid
from .parts import FigureParts
from .svg import ID_TOKEN


def reveal_summary() -> str:
    """The words of the button that reveals a figure after the reader's prediction."""
    return _("Reveal the figure (after you have made your prediction)")


def prediction_node(prediction: str) -> nodes.paragraph:
    para = nodes.paragraph(classes=["tv-prediction"])
    para += nodes.strong("", _("Predict first:"))
    para += nodes.Text(" " + prediction)
    return para


@dataclass(frozen=True)
class Prompt:
    """What the reader is asked before the figure: a question, maybe with choices to commit to."""

    prediction: str | None = None
    choices: list[dict[str, Any]] | None = None
    confirmation: str | None = None  #: what the choices' check says about the marked answer

    def before(self) -> list[nodes.Node]:
        """The question and the lettered choices, for every builder."""
        if not self.prediction:
            return []
        return [prediction_node(self.prediction), *([choices_list(self.choices)] if self.choices else [])]

    def answer(self) -> list[nodes.Node]:
        """The answer and the explanation of each choice, shown with the figure."""
        return [answers(self.choices, self.confirmation)] if self.choices and self.prediction else []


def html_figure(parts: FigureParts, figure_id: str, classes: list[str], prompt: Prompt,
                footer: str) -> nodes.Element:
    prediction = prompt.prediction
    figure = tv_html_figure(ids=[figure_id], classes=classes)
    svg = parts.svg.replace(ID_TOKEN, figure_id)
    # every picture keeps its natural size and scrolls in its own region where the column is
    # narrower: shrunk to fit a phone, its text would fall below 12 px
    picture = scroll_region(markup(f'<div class="tv-svg">{svg}</div>'), _("Figure: {title}").format(title=parts.title))
    extras = [
        markup(n["markup"].replace(ID_TOKEN, figure_id)) if isinstance(n, tv_html_markup) else n
        for n in parts.extra_html
    ]
    body: list[nodes.Node] = [picture, *extras, _scrolling(parts.details, parts.title)]
    if prediction:
        figure.extend(prompt.before())
        if prompt.choices:
            form = choices_form(prompt.choices, prediction)
            figure += markup(form.replace(ID_TOKEN, figure_id))
        reveal = tv_html_reveal(summary=reveal_summary())
        reveal.extend(prompt.answer())
        reveal.extend(body)
        figure += reveal
    else:
        figure.extend(body)
    caption = tv_html_caption()
    caption += nodes.paragraph("", "", nodes.strong("", parts.title), classes=["tv-title"])
    caption += nodes.paragraph("", footer, classes=list(PROVENANCE_CLASSES))
    figure += caption
    return figure


def _scrolling(details: list[nodes.Node], title: str) -> nodes.Element:
    """Tables get a focusable scroll region so they never overflow a phone screen, those nested in
    a detail too (a sweep's table at each point, in its list of points)."""
    box = nodes.container(classes=["tv-details"])
    for node in details:
        if isinstance(node, nodes.table):
            box += scroll_region(node, _("Data table for {title}").format(title=title))
            continue
        for table in list(node.findall(nodes.table)) if isinstance(node, nodes.Element) else []:
            named = len(table) and isinstance(table[0], nodes.title)
            label = table[0].astext() if named else _("Data table for {title}").format(title=title)
            region = tv_html_scroll(label=label)
            table.replace_self(region)
            region += table
        box += node
    return box


def latex_figure(parts: FigureParts, outdir: Path, filename: str, prompt: Prompt,
                 footer: str) -> nodes.Element:
    box = nodes.container(classes=["tv-figure"])
    box.extend(prompt.before())
    if parts.pdf_grid:
        names = [f"{Path(filename).stem}-{n}.pdf" for n in range(len(parts.pdf_grid))]
        for name, (_caption, draw) in zip(names, parts.pdf_grid):
            if not (outdir / name).exists():
                draw(outdir / name)
        box += tv_latex_grid(filenames=names, captions=[caption for caption, _ in parts.pdf_grid])
    elif parts.draw_pdf is not None:
        target = outdir / filename
        if not target.exists():
            parts.draw_pdf(target)
        box += tv_latex_graphic(filename=filename)
    box += nodes.paragraph("", "", nodes.strong("", parts.title))
    box.extend(prompt.answer())
    box.extend(parts.details)
    box += nodes.paragraph("", footer, classes=list(PROVENANCE_CLASSES))
    return box


def plain_figure(parts: FigureParts, prompt: Prompt, footer: str) -> nodes.Element:
    box = nodes.container(classes=["tv-figure"])
    box.extend(prompt.before())
    para = nodes.paragraph()
    para += nodes.strong("", _("Figure: {title}. ").format(title=parts.title))
    para += nodes.Text(parts.alt)
    box += para
    box.extend(prompt.answer())
    box.extend(parts.details)
    box += nodes.paragraph("", footer, classes=list(PROVENANCE_CLASSES))
    return box
