"""Guided tours: ``tv-steps`` with ``tv-step`` stops walk a reader through a ``tv-graph`` of the page.

Read into nodes (:mod:`.directive`); when the page is written a page pass (:mod:`.render`) numbers
the stops on the graph's boxes and draws the tour as an ordered list (a stepper with script).
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ....core.nodes import add_placeholder_node
from ....render.registry import add_page_pass, lazy
from .directive import StepDirective, StepsDirective, tensorviz_step, tensorviz_steps

#: tours run first: they leave step numbers for the graph figures
ORDER = 10


def setup_tour(app: Sphinx) -> None:
    app.add_directive("tv-steps", StepsDirective)
    app.add_directive("tv-step", StepDirective)
    add_placeholder_node(app, tensorviz_steps)
    add_placeholder_node(app, tensorviz_step)
    add_page_pass(app, ORDER, lazy(f"{__name__}.render:render_tours"))
