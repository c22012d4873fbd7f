"""Guided tours drawn from a ``tv-graph``'s artifact (checkpoints: :mod:`.activations`).

Static first: a tour is an ordered list whose steps link to their node (CSS
``:target`` highlights it) and source lines. The JavaScript turns it into a stepper.
A step's target may be a node id, an old-style id (``mul@block#0``, see
:func:`~sphinx_tensorviz.graph_ids.canonical`) or the label as drawn (``mul_0``,
``apply_rotary_pos_emb()``) when only one node carries it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from docutils import nodes

from ..core.ids import canonical
from ..read.steps_directive import tensorviz_step, tensorviz_steps
from ..warnings_ import Subtype, warn
from .activations import activations_figure
from .graph_view import GraphView, build_view, short_label
from .html_nodes import tv_html_tag
from .ids import element_id, slugify

__all__ = ["GraphOnPage", "activations_figure", "resolve_target", "steps_figure"]


@dataclass(frozen=True)
class GraphOnPage:
    """A traced graph as other directives on its page see it: the same view as its figure."""

    figure_id: str
    artifact: dict[str, Any]
    depth: int
    expand: tuple[str, ...]

    @cached_property
    def view(self) -> GraphView:
        """What the figure shows by default (computed once per page, shared by every step)."""
        return build_view(self.artifact["data"], depth=self.depth, expand=self.expand)

    @property
    def node_ids(self) -> list[str]:
        return list(self.view.nodes)

    @cached_property
    def drawn_labels(self) -> dict[str, list[str]]:
        """Label as drawn in its box (``mul #0``, ``q_proj``) -> the ids of the nodes drawn so."""
        found: dict[str, list[str]] = {}
        for node_id, node in self.view.nodes.items():
            found.setdefault(short_label(node, self.view.parent[node_id]), []).append(node_id)
        return found

    def resolve(self, target: str) -> str | None:
        """The node id ``target`` names: an id (old spellings too), or a label as drawn that only one
        node has."""
        for candidate in (target, canonical(target)):
            if candidate in self.view.nodes:
                return candidate
        ids = self.drawn_labels.get(target) or self.drawn_labels.get(target.replace(" #", "_"), [])
        return ids[0] if len(ids) == 1 else None

    def anchor(self, node_id: str) -> tuple[str, str]:
        """(visible node id, element id) for a node, which may sit inside a collapsed module."""
        view = self.view
        shown = view.rep.get(node_id, node_id)
        return shown, element_id(self.figure_id, "c" if view.is_cluster(shown) else "n", shown)


def resolve_target(graph: GraphOnPage, target: str, location: nodes.Node, what: str) -> str | None:
    """The node id for ``target`` (id or drawn label); else a warning naming the closest ids."""
    found = graph.resolve(target)
    if found is not None:
        return found
    same = graph.drawn_labels.get(target, [])
    if same:
        warn(f"{what} {target!r} is the label of {len(same)} nodes; give one of their ids: {', '.join(same[:5])}",
             Subtype.target, location=location)
        return None
    close = difflib.get_close_matches(target, [*graph.node_ids, *graph.drawn_labels], n=3, cutoff=0.5)
    hint = f"; closest: {', '.join(close)}" if close else ""
    warn(f"{what} {target!r} is not a node of the graph{hint}", Subtype.target, location=location)
    return None


def steps_figure(node: tensorviz_steps, graph: GraphOnPage, html: bool) -> nodes.Element:
    steps = [s for s in node.children if isinstance(s, tensorviz_step)]
    sid = node["steps_id"]
    items = nodes.enumerated_list(classes=["tv-step-list"], enumtype="arabic")
    for step in steps:
        resolved = resolve_target(graph, step["target"], step, f"step {step['step']!r}: target")
        target = resolved or step["target"]
        shown, element = graph.anchor(target)
        item = nodes.list_item(ids=[f"{sid}-{step['step']}"], classes=["tv-step"])
        item += nodes.paragraph("", "", nodes.strong("", step["title"]), classes=["tv-step-title"])
        item.extend(child.deepcopy() for child in step.children)
        if resolved is not None:
            link = nodes.paragraph(classes=["tv-step-where"])
            link += nodes.Text("In the graph: ")
            link += nodes.reference("", target, refuri=f"#{element}", classes=["tv-step-link"])
            key, line = _source_line(graph, target)
            if line:
                link += nodes.Text(" · ")
                text, anchor = ((f"model source line {line}", f"{graph.figure_id}-L{line}") if not key else
                                (f"{key} line {line}", f"{graph.figure_id}-{slugify(key)}-L{line}"))
                link += nodes.reference("", text, refuri=f"#{anchor}")
            item += link
        items += item
        item["tv-attrs"] = {"data-step": step["step"], "data-target": target, "data-visible": shown}
    heading = nodes.paragraph("", "", nodes.strong("", node["title"]), classes=["tv-steps-title"])
    if not html:
        box = nodes.container(classes=["tv-steps"], ids=[sid])
        box += heading
        box += items
        return box
    section = tv_html_tag(tag="section", attrs={
        "class": "tv-steps", "id": sid, "data-graph": graph.figure_id, "data-opening": node["opening"],
        "aria-label": node["title"],
    })
    section += heading
    section += _html_step_list(items)
    return section


def _html_step_list(items: nodes.enumerated_list) -> nodes.Element:
    """The ``<ol>`` with data attributes on each ``<li>`` for the stepper script."""
    ol = tv_html_tag(tag="ol", attrs={"class": "tv-step-list"})
    for item in items.children:
        attrs = {"class": "tv-step", "id": item["ids"][0], **item["tv-attrs"]}
        li = tv_html_tag(tag="li", attrs=attrs)
        li.extend(item.children)
        ol += li
    return ol


def _source_line(graph: GraphOnPage, node_id: str) -> tuple[str, int | None]:
    """(file key, line) of a node's source; the key is ``""`` for the model file itself."""
    for layer in graph.artifact["data"]["layers"]:
        if layer["id"] == node_id:
            source = layer.get("source") or {}
            key = source.get("file", "")
            return (key if isinstance(key, str) else ""), source.get("line")
    return "", None
