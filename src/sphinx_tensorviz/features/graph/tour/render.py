"""Guided tours drawn from a ``tv-graph``'s artifact.

Static first: a tour is an ordered list whose steps link to their node (CSS
``:target`` highlights it) and source lines. The JavaScript turns it into a stepper.
A step's target may be a node id, an old-style id (``mul@block#0``, see
:func:`~sphinx_tensorviz.core.ids.canonical`) or the label as drawn (``mul_0``,
``apply_rotary_pos_emb()``) when only one node carries it.
"""

from __future__ import annotations

import difflib
from typing import Any

from docutils import nodes

from ....core.i18n import _
from ....render.bidi import isolated
from ....render.html_nodes import tv_html_tag
from ....render.ids import line_id
from ....render.page import Page
from ....render.slides import ONE_AT_A_TIME
from ....warnings_ import Subtype, warn
from ..page import GraphOnPage, drawn_from_graph, graph_for, named_graphs
from .directive import tensorviz_step, tensorviz_steps
from .slides import graph_on_tour_slide

__all__ = ["render_tours", "resolve_target", "steps_figure"]


def render_tours(page: Page) -> None:
    """The page pass: number each tour's stops on its graph (a note for the graph's figure), then draw
    the tours; a ``tv-step`` outside a ``tv-steps`` is a located warning."""
    for tour in page.document.findall(tensorviz_steps):  # the author's words, in the page's language
        tour["title"] = page.ctx.words(tour["title"]) if tour["title"] else _("Guided tour")
        for step in tour.findall(tensorviz_step):
            step["title"] = page.ctx.words(step["title"])
    for graph_name, boxes in tour_markers(page).items():
        page.render_notes.setdefault(graph_name, {})["markers"] = boxes
    for stray in list(page.document.findall(tensorviz_step)):
        if not isinstance(stray.parent, tensorviz_steps):
            warn("tv-step only works inside a tv-steps block", Subtype.option, location=stray)
            stray.replace_self([])
    for tour in list(page.document.findall(tensorviz_steps)):
        graph = graph_for(page, tour, "tv-steps")
        if graph is None:
            tour.replace_self([])
            continue
        if page.slides:
            graph = graph_on_tour_slide(page, tour, graph)

        def make(tour: tensorviz_steps = tour, graph: GraphOnPage = graph) -> nodes.Node:
            return isolated(steps_figure(tour, graph, page.html, slides=page.slides))

        tour.replace_self(drawn_from_graph(page, tour, graph, make))


def tour_markers(page: Page) -> dict[str, dict[str, list[list[Any]]]]:
    """graph name -> visible box id -> [[step number, title], ...] for every tour on the page."""
    found: dict[str, dict[str, list[list[Any]]]] = {}
    for tour in page.document.findall(tensorviz_steps):
        graph = named_graphs(page).get(tour["graph"])
        if graph is None:
            continue
        boxes = found.setdefault(tour["graph"], {})
        steps = [s for s in tour.children if isinstance(s, tensorviz_step)]
        for number, step in enumerate(steps, start=1):
            node_id = graph.resolve(step["target"])
            if node_id is not None:
                boxes.setdefault(graph.anchor(node_id)[0], []).append([number, step["title"]])
    return found


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
    hint = _closest_hint(graph, target)
    warn(f"{what} {target!r} is not a node of the graph{hint}", Subtype.target, location=location)
    return None


def _closest_hint(graph: GraphOnPage, target: str) -> str:
    """``; closest: a, b (...)``: each name once (a node's drawn label is often its id), and a label
    that several nodes share replaced by their ids, so every name given can be written as is."""
    close = difflib.get_close_matches(target, list(dict.fromkeys([*graph.node_ids, *graph.drawn_labels])),
                                      n=3, cutoff=0.5)
    ids = set(graph.node_ids)
    named = [name if name in ids or len(graph.drawn_labels.get(name, [])) <= 1 else graph.drawn_labels[name][:3]
             for name in close]
    names = list(dict.fromkeys(n for each in named for n in ([each] if isinstance(each, str) else each)))
    if not names:
        return ""
    return (f"; closest: {', '.join(names)} (write a node id, or a label drawn on one node only, "
            "as the graph's outline under the figure shows it)")


def steps_figure(node: tensorviz_steps, graph: GraphOnPage, html: bool, *, slides: bool = False) -> nodes.Element:
    """The tour as an ordered list of steps. On slides each step is a fragment shown alone (the
    deck's next key press is the next step) and the links into the page's outline and source,
    which a slide does not show, are left out."""
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
        if resolved is not None and not slides:
            link = nodes.paragraph(classes=["tv-step-where"])
            link += nodes.Text(_("In the graph: "))
            link += nodes.reference("", target, refuri=f"#{element}", classes=["tv-step-link"])
            key, line = _source_line(graph, target)
            if line:
                link += nodes.Text(" · ")
                text = (_("model source line {line}").format(line=line) if not key
                        else _("{file} line {line}").format(file=key, line=line))
                anchor = line_id(graph.figure_id, key, line)
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
        "class": "tv-steps tv-steps-fragments" if slides else "tv-steps", "id": sid, "data-graph": graph.figure_id,
        "data-opening": node["opening"], "aria-label": node["title"],
    })
    section += heading
    section += _html_step_list(items, " ".join(ONE_AT_A_TIME) if slides else "")
    return section


def _html_step_list(items: nodes.enumerated_list, fragment: str) -> nodes.Element:
    """The ``<ol>`` with data attributes on each ``<li>`` for the stepper script (on a page) or
    reveal.js (``fragment``: its classes, on a slide)."""
    ol = tv_html_tag(tag="ol", attrs={"class": "tv-step-list"})
    for number, item in enumerate(items.children, start=1):
        attrs = {"class": f"tv-step {fragment}".strip(), "id": item["ids"][0], **item["tv-attrs"]}
        if fragment:  # the steps not shown take no room, and would not be counted
            attrs["value"] = str(number)
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
