"""Guided tours and activation checkpoints, drawn from a ``tv-graph``'s artifact.

Static first: a tour is an ordered list whose steps link to their node (CSS
``:target`` highlights it) and source lines; checkpoints are small multiples
with their numbers in tables. The JavaScript turns them into a stepper and a
selector.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

from docutils import nodes

from ..read.steps_directive import tensorviz_activations, tensorviz_step, tensorviz_steps
from ..execute.request import renderer_fingerprint
from ..store.hashing import digest
from ..warnings_ import Subtype, warn
from .assemble import prediction_node
from .cache import RenderCache, artifact_key
from .describe import fmt
from .graph_view import GraphView, build_view, short_label
from .ids import element_id, slugify
from .heatmap_svg import heatmap_svg
from .html_nodes import scroll_region, tv_html_tag
from .svg import ID_TOKEN
from .tables import data_table


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
        """The node id ``target`` names: an id, or a label as drawn that only one node has."""
        if target in self.view.nodes:
            return target
        ids = self.drawn_labels.get(target, [])
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
            line = _source_line(graph, target)
            if line:
                link += nodes.Text(" · ")
                link += nodes.reference("", f"model source line {line}", refuri=f"#{graph.figure_id}-L{line}")
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


def _source_line(graph: GraphOnPage, node_id: str) -> int | None:
    for layer in graph.artifact["data"]["layers"]:
        if layer["id"] == node_id:
            return (layer.get("source") or {}).get("line")
    return None


def activations_figure(node: tensorviz_activations, graph: GraphOnPage, html: bool, cache: RenderCache) -> nodes.Element:
    records = graph.artifact["data"].get("activations") or {}
    fid = node["figure_id"]
    render = node["render"]
    if html:
        box: nodes.Element = tv_html_tag(tag="div", attrs={"class": "tv-activations", "id": fid})
    else:
        box = nodes.container(classes=["tv-activations"], ids=[fid])
    if render.get("title"):
        box += nodes.paragraph("", "", nodes.strong("", render["title"]))
    if render.get("prediction"):
        box += prediction_node(render["prediction"])
    box.extend(child.deepcopy() for child in node.children)
    if not records:
        warn("the graph records no activations; give it :checkpoints:", Subtype.option, location=node)
        return box
    for name, record in records.items():
        box += _checkpoint(name, record, f"{fid}-{slugify(name)}", html,
                           partial(cache.svg, artifact_key(graph.artifact), digest({"checkpoint": name,
                                                                                 "renderer": renderer_fingerprint()})))
    return box


def _checkpoint(name: str, record: dict[str, Any], cid: str, html: bool,
                cached: Callable[[Callable[[], str]], str]) -> nodes.Element:
    metrics = record["metrics"]
    label = f"{name}: token {record['token']}, {metrics['width']} features"
    summary = (f"Feature RMS {fmt(metrics['rms'])} · min {fmt(metrics['min'])} · max {fmt(metrics['max'])}"
               + (f" · {metrics['heads']} heads" if "heads" in metrics else ""))
    columns = [f"f{j}" for j in range(len(record["values"]))]
    data = {"values": [record["values"]], "rows": [f"token {record['token']}"], "columns": columns,
            "unit": "activation", "diverging": True}
    if html:
        box: nodes.Element = tv_html_tag(tag="div", attrs={"class": "tv-checkpoint", "id": cid, "data-checkpoint": name})
        svg = cached(partial(heatmap_svg, data, title=label, alt=f"Activation strip at {name}. {summary}.",
                             colormap=None))
        strip = scroll_region(nodes.raw("", f'<div class="tv-svg">{svg.replace(ID_TOKEN, cid)}</div>', format="html"),
                              f"Activations at {name}")
    else:
        box = nodes.container(classes=["tv-checkpoint"], ids=[cid])
        strip = None
    box += nodes.paragraph("", label, classes=["tv-checkpoint-label"])
    if strip is not None:
        box += strip
    box += nodes.paragraph("", summary, classes=["tv-checkpoint-metrics"])
    table = data_table(f"Values at {name}", "", data["rows"], columns, [[fmt(v) for v in record["values"]]])
    table["ids"] = [f"{cid}-table"]
    box += scroll_region(table, f"Values at {name}") if html else table
    return box
