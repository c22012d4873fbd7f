"""``tv-activations``: the checkpoints a ``tv-graph`` recorded, each drawn the way its layout reads.

Read into a node (:mod:`.directive`); when the page is written a page pass (:mod:`.render`) draws
token strips, channel maps or head maps from the graph's artifact, with axes named and the
numbers in a table.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ....core.nodes import add_placeholder_node
from ....render.registry import add_page_pass, lazy
from .directive import ActivationsDirective, tensorviz_activations

ORDER = 20


def setup_activations(app: Sphinx) -> None:
    app.add_directive("tv-activations", ActivationsDirective)
    add_placeholder_node(app, tensorviz_activations)
    add_page_pass(app, ORDER, lazy(f"{__name__}.render:render_activations"))
