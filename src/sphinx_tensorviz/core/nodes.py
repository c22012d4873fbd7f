"""The format-neutral node a directive leaves in the doctree.

It carries the request (what to show) and is replaced at write time, per
builder, by :mod:`sphinx_tensorviz.render.transform`.
"""

from __future__ import annotations

from docutils import nodes


class tensorviz_figure(nodes.General, nodes.Element):  # noqa: N801 - docutils naming
    """Placeholder for one figure; attributes ``request`` and ``figure_id``."""


def visit_unreplaced(self: object, node: nodes.Element) -> None:
    """Never reached in practice: the render transform replaces every figure for every builder."""
    raise nodes.SkipNode
