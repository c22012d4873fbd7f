"""Swept figures drawn whole, one per point: ``tv-graph`` with ``:sweep:`` and its ``tv-activations``.

A graph is too large for small multiples on one colour scale, so each point is rendered by the
graph renderer as a complete figure of its own (own id ``<figure id>-p<n>``, so its script,
links and tour anchors work unchanged), and this module wraps them: in HTML the sweep's controls
and one ``.tv-sweep-point`` per figure (all shown, stacked, without JavaScript;
``tensorviz-explore.js`` shows one at a time). A ``tv-activations`` of a swept graph is drawn
once per point and wrapped the same way with ``data-tv-follows`` naming the graph, so it follows
the graph's controls. Other builders get every point in turn, each under its label.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from docutils import nodes

from ..core.sweep import Sweep
from .assemble import Prompt, reveal_summary
from .choices import choices_form
from .html_nodes import markup, tv_html_reveal, tv_html_tag
from .svg import ID_TOKEN, attr_value
from .sweep_controls import controls_markup, point_coords, sweep_sizes


def point_figure_id(figure_id: str, number: int) -> str:
    return f"{figure_id}-p{number}"


#: render options shown once for the whole sweep, not with every point's figure
PROMPT_OPTIONS = ("prediction", "choices", "choices-check")


def switcher(figure_id: str, extra_ids: list[str], sweep: Sweep, figures: list[nodes.Node], html: bool,
             follows: str | None = None, prompt: Prompt | None = None) -> nodes.Element:
    """Wrap one rendered figure per point. ``follows``: the id of the swept figure whose controls
    choose the point (for a ``tv-activations``); without it the wrapper carries the controls.
    ``prompt``: the question (and choices) asked once, before every point is revealed."""
    labels = [point.label for point in sweep.points]
    prompt = prompt or Prompt()
    if not html:
        box = nodes.container(classes=["tv-sweep-figures"], ids=[figure_id, *extra_ids])
        box.extend(prompt.before())
        box.extend(prompt.answer())
        for label, figure in zip(labels, figures):
            box += nodes.paragraph("", "", nodes.strong("", label))
            box += figure
        return box
    sizes = sweep_sizes(sweep)
    attrs = {"class": "tv-sweep tv-sweep-figures", "data-tv-sizes": " ".join(map(str, sizes))}
    attrs.update({"data-tv-follows": follows} if follows else {"id": figure_id})
    box = tv_html_tag(tag="div", attrs=attrs)
    anchors = "".join(f'<span id="{attr_value(i)}"></span>' for i in ([figure_id] if follows else []) + extra_ids)
    if anchors:
        box += markup(anchors)
    body: nodes.Element = box
    if prompt.prediction:
        box.extend(prompt.before())
        if prompt.choices:
            box += markup(choices_form(prompt.choices, prompt.prediction).replace(ID_TOKEN, figure_id))
        body = tv_html_reveal(summary=reveal_summary())
        body.extend(prompt.answer())
        box += body
    if not follows:
        body += markup(controls_markup(sweep).replace(ID_TOKEN, figure_id))
    points = tv_html_tag(tag="div", attrs={"class": "tv-sweep-points"})
    for number, (label, figure) in enumerate(zip(labels, figures)):
        point = tv_html_tag(tag="div", attrs={"class": "tv-sweep-point", "data-tv-coords": point_coords(number, sizes)})
        point += nodes.paragraph("", label, classes=["tv-sweep-label"])
        point += figure
        points += point
    body += points
    return box


def per_point(node: nodes.Element, sweep: Sweep, draw: Callable[[nodes.Element, int], nodes.Node]) -> list[nodes.Node]:
    """``draw`` called with a copy of ``node`` for each point (own figure id, no names of its own)."""
    figures = []
    for number, point in enumerate(sweep.points):
        copy = node.deepcopy()
        copy["figure_id"] = point_figure_id(node["figure_id"], number)
        # the first point keeps the names, so a guided tour numbers its stops on that graph
        copy["ids"], copy["names"] = [], (list(node["names"]) if number == 0 else [])
        if "request" in copy.attributes:
            render = {k: v for k, v in point.request.render.items() if k not in PROMPT_OPTIONS}
            copy["request"], copy["sweep"] = replace(point.request, render=render), None
        figures.append(draw(copy, number))
    return figures
