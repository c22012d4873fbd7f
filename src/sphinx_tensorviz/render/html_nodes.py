"""HTML-only wrapper nodes: ``<figure>``, ``<details>`` reveal, ``<figcaption>`` and a scroll region.

They only ever appear in doctrees written by HTML builders; the render
transform gives every other builder plain docutils nodes.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator

from .svg import attr, text


class tv_html_figure(nodes.General, nodes.Element):  # noqa: N801
    """``<figure>`` around prediction, reveal and caption."""


class tv_html_reveal(nodes.General, nodes.Element):  # noqa: N801
    """A native ``<details>`` so revealing works without JavaScript; ``summary`` attribute."""


class tv_html_caption(nodes.General, nodes.Element):  # noqa: N801
    """``<figcaption>``: title and provenance footer."""


class tv_html_scroll(nodes.General, nodes.Element):  # noqa: N801
    """A keyboard-focusable region that scrolls wide content (tables, graphs) on small screens."""


class tv_html_markup(nodes.General, nodes.Element):  # noqa: N801
    """Markup written as it is (an inline SVG, a source panel, a form): ``nodes.raw`` for HTML, except
    that Sphinx's search index does not read it.

    The indexer strips the tags of raw HTML and indexes every word left: each cell's tooltip, every
    label of a graph, every line of a library's source. Those words are already in the figure's
    text alternatives (long description, outline, data table), which stay searchable; indexing the
    markup as well made the search index the slowest part of writing a page.
    """


class tv_html_translated(nodes.General, nodes.Element):  # noqa: N801
    """A part of a figure, already translated for this builder (``markup``), with the words the search
    index would have read in it as its one text child (see :mod:`.part_cache`); ``math``: it
    holds inline math, so the page must load MathJax as if the math had been translated with it."""


def translated(markup: str, words: str, math: bool = False) -> tv_html_translated:
    return tv_html_translated("", nodes.Text(words), markup=markup, math=math)


def markup(text: str) -> tv_html_markup:
    """HTML written as it is, left out of the search index."""
    return tv_html_markup(markup=text)


def _visit_markup(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append(node["markup"])
    raise nodes.SkipNode


def _visit_translated(self: HTML5Translator, node: nodes.Element) -> None:
    if node.get("math"):  # what Sphinx's math visitors note, and MathJax's page hook reads
        self._has_maths_elements = True
    _visit_markup(self, node)


def scroll_region(node: nodes.Node, label: str) -> tv_html_scroll:
    """``node`` inside a labelled, focusable region that scrolls sideways on narrow screens."""
    region = tv_html_scroll(label=label)
    region += node
    return region


def _visit_figure(self: HTML5Translator, node: nodes.Element) -> None:
    # One element has one id; further ids (from :name:) become anchors inside it.
    first, *others = node["ids"]
    self.body.append(f'<figure id="{first}" class="{" ".join(node["classes"])}">\n')
    self.body.extend(f'<span id="{other}"></span>' for other in others)


def _depart_figure(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append("</figure>\n")


def _visit_reveal(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append(f'<details class="tv-reveal"><summary>{text(node["summary"])}</summary>\n')


def _depart_reveal(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append("</details>\n")


def _visit_caption(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append('<figcaption class="tv-caption">\n')


def _depart_caption(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append("</figcaption>\n")


def _visit_scroll(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append(f'<div class="tv-scroll" tabindex="0" role="region" aria-label={attr(node["label"])}>\n')


def _depart_scroll(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append("</div>\n")


def setup_html_nodes(app: Sphinx) -> None:
    app.add_node(tv_html_figure, html=(_visit_figure, _depart_figure))
    app.add_node(tv_html_reveal, html=(_visit_reveal, _depart_reveal))
    app.add_node(tv_html_caption, html=(_visit_caption, _depart_caption))
    app.add_node(tv_html_scroll, html=(_visit_scroll, _depart_scroll))
    app.add_node(tv_html_tag, html=(_visit_tag, _depart_tag))
    app.add_node(tv_html_markup, html=(_visit_markup, None))
    app.add_node(tv_html_translated, html=(_visit_translated, None))


class tv_html_tag(nodes.General, nodes.Element):  # noqa: N801
    """Any HTML element with data attributes: ``tag`` and ``attrs`` (escaped on output)."""


def _visit_tag(self: HTML5Translator, node: nodes.Element) -> None:
    attrs = "".join(f" {name}={attr(str(value))}" for name, value in node["attrs"].items())
    self.body.append(f"<{node['tag']}{attrs}>\n")


def _depart_tag(self: HTML5Translator, node: nodes.Element) -> None:
    self.body.append(f"</{node['tag']}>\n")
