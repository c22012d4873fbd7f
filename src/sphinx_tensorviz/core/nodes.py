"""The format-neutral node a directive leaves in the doctree.

It carries the request (what to show) and is replaced at write time, per
builder, by :mod:`sphinx_tensorviz.render.transform`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from docutils import nodes

from .i18n import TranslatableWords, render_texts


class tensorviz_figure(nodes.General, nodes.Element, TranslatableWords):  # noqa: N801 - docutils naming
    """Placeholder for one figure; attributes ``request`` and ``figure_id`` (an authored figure:
    ``render``, and ``author_words``, the words of what it draws)."""

    def author_texts(self) -> Iterator[str]:
        """The figure's words for the course's catalogue: its render options' and what it draws."""
        request = self.get("request")
        yield from render_texts(request.render if request is not None else self.get("render", {}))
        yield from self.get("author_words", ())


def visit_unreplaced(self: object, node: nodes.Element) -> None:
    """Never reached in practice: the render transform replaces every figure for every builder."""
    raise nodes.SkipNode


def add_placeholder_node(app: Any, node_class: type[nodes.Element]) -> None:
    """Register a node that the renderer replaces before any writer sees it (every builder's format)."""
    app.add_node(node_class, **{b: (visit_unreplaced, None) for b in ("html", "latex", "text", "man", "texinfo")})


def error_box(message: str, traceback: str = "") -> nodes.Element:
    """The box a page shows instead of a figure: the message's first line as a paragraph; the rest of
    it (a YAML error's caret diagram, a multi-line exception) and the traceback as literal blocks,
    whose line breaks and spaces every builder keeps (a paragraph would fold the diagram into one line)."""
    first, _, rest = message.partition("\n")
    box = nodes.error(classes=["tv-error"])
    box += nodes.paragraph("", first)
    if rest.strip():
        box += nodes.literal_block(rest, rest, language="text", linenos=False, classes=["tv-message-detail"])
    if traceback:
        box += nodes.literal_block(traceback, traceback, classes=["tv-traceback"])
    return box
