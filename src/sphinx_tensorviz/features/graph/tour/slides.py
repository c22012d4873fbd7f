"""A tour on a slide, beside its graph.

On a page a reader scrolls back to the graph a tour steps through; a slide shows what is on it, and
a course usually draws its graph under the lesson's title and tours it under a heading of its own,
a slide later. So on slides a tour whose graph is on another slide gets the graph drawn again just
before it (the same figure, without its prediction prompt, which the graph's own slide asks), and
the tour steps through that copy.
"""

from __future__ import annotations

from dataclasses import replace

from ....core.nodes import tensorviz_figure
from ....render.page import Page
from ....render.slides import slide_of
from ..page import GraphOnPage
from .directive import tensorviz_steps

#: render options that ask the reader something: asked once, on the graph's own slide
PROMPT_OPTIONS = ("prediction", "choices", "choices-check")


def graph_on_tour_slide(page: Page, tour: tensorviz_steps, graph: GraphOnPage) -> GraphOnPage:
    """The graph the tour steps through on its slide: ``graph`` where its figure is on the tour's
    slide, else a copy of its figure put before the tour (its figure id made from the tour's)."""
    figure = next((n for n in page.document.findall(tensorviz_figure)
                   if tour["graph"] in n["names"] and n.get("sweep") is None), None)
    if figure is None or slide_of(figure) is slide_of(tour):
        return graph
    request = figure["request"]
    copy = figure.deepcopy()
    copy["figure_id"] = f"{tour['steps_id']}-graph"
    copy["ids"] = []  # the page's anchors stay on the graph's own figure
    copy["request"] = replace(request, render={k: v for k, v in request.render.items() if k not in PROMPT_OPTIONS})
    tour.parent.insert(tour.parent.index(tour), copy)
    return replace(graph, figure_id=copy["figure_id"])
