"""The nested text alternative of a graph figure, in the figure's reading order.

It reads the same layout as the SVG (pass it in), so a warm build that has the SVG cached does not
lay the graph out again just for the outline; :func:`outline_to_json` / :func:`outline_from_json`
let the outline itself be cached like the SVG.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ...core.i18n import _, counted
from .layout import GraphLayout, layout_graph
from .view import build_view, shape_text, short_label

__all__ = ["OutlineItem", "graph_outline", "outline_from_json", "outline_to_json"]




@dataclass(frozen=True)
class OutlineItem:
    """One entry of the nested text alternative; ``children`` only for open modules."""

    id: str
    text: str
    children: tuple["OutlineItem", ...] = field(default=())


def graph_outline(graph: Mapping[str, Any], *, depth: int, expand: Collection[str] = (),
                  layout: Optional[GraphLayout] = None) -> list[OutlineItem]:
    """The graph as nested items in reading order (top to bottom, then left to right).

    Each op or layer says what feeds it and its output shape, so the outline carries everything
    the figure shows; open modules nest their children, collapsed ones say how many ops they hide.
    Pass the figure's ``layout`` to share it (one layout per view) instead of computing it again.
    """
    view = build_view(graph, depth=depth, expand=expand)
    layout = layout or layout_graph(graph, depth=depth, expand=expand)
    inputs: dict[str, list[str]] = {}
    outputs: dict[str, Optional[str]] = {}
    for e in view.edges:
        inputs.setdefault(e.target, []).append(e.source)
        outputs.setdefault(e.source, e.label)
    kids: dict[Optional[str], list[str]] = {}
    for box in layout.boxes:
        kids.setdefault(box.parent, []).append(box.id)

    def reading_order(ids: list[str]) -> list[str]:
        return sorted(ids, key=lambda n: (layout.box(n).y, layout.box(n).x, view.order[n]))

    def item(node_id: str) -> OutlineItem:
        node = view.nodes[node_id]
        name = short_label(node, view.parent[node_id])
        if view.is_cluster(node_id):
            children = tuple(item(k) for k in reading_order(kids.get(node_id, [])))
            return OutlineItem(node_id, _("{name} (module {id})").format(name=name, id=node_id), children)
        if node.get("kind") == "module":
            count = view.hidden_count.get(node_id, 0)
            what = _("{name} (collapsed module {id}, {ops})").format(name=name, id=node_id,
                                                                     ops=counted(count, "op", "ops"))
        else:
            op = str(node.get("op") or "")
            what = f"{name} ({op})" if op and name.lower() != op.lower() else str(name)
            if name != node_id:  # the id a tour's :target: takes, as the box's tooltip shows it
                what += _(", id {id}").format(id=node_id)
        srcs = inputs.get(node_id)
        if srcs:
            what += _("; inputs: {inputs}").format(inputs=", ".join(srcs))
        shape = shape_text(node) or outputs.get(node_id)
        if shape:
            what += _("; output {shape}").format(shape=shape)
        return OutlineItem(node_id, what)

    return [item(k) for k in reading_order(kids.get(None, []))]


def outline_to_json(items: list[OutlineItem] | tuple[OutlineItem, ...]) -> list[Any]:
    """Nested ``[id, text, children]`` lists, for the render cache."""
    return [[item.id, item.text, outline_to_json(item.children)] for item in items]


def outline_from_json(data: list[Any]) -> list[OutlineItem]:
    """The inverse of :func:`outline_to_json`."""
    return [OutlineItem(str(i), str(t), tuple(outline_from_json(c))) for i, t, c in data]
