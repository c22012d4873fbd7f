"""``tv-graph``: a model traced once in a worker, drawn as a navigable, accessible graph.

The directive (:mod:`.directive`) describes the model and its inputs; the worker traces one
forward pass (:mod:`.run`, named in :data:`~sphinx_tensorviz.core.protocol.RUNNERS`, on the
capture code of :mod:`sphinx_tensorviz.features.graph.capture`); the page draws the default view with
its outline and source panels (:mod:`.render`, :mod:`.sources`). A sweep of a graph is drawn as
one figure per point by the common renderer. A page pass checks ``:expand:`` against the recorded
graph (:mod:`.expand`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: checking ``:expand:`` names needs nothing from the other page passes
EXPAND_ORDER = 5


def setup_graph(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_executed_kind, add_page_pass, lazy
    from .activations import setup_activations
    from .directive import GraphDirective
    from .tour import setup_tour

    app.add_directive("tv-graph", GraphDirective)
    # a catalogue preview shows the top level only, without the legend: the boxes at thumbnail size
    add_executed_kind(app, "tv-graph", lazy(f"{__name__}.render:graph_parts"),
                      thumbnail_render={"depth": 1, "preview": True})
    add_page_pass(app, EXPAND_ORDER, lazy(f"{__name__}.expand:check_expand"))
    setup_tour(app)  # tours and activation strips read this kind's recordings: its sub-features
    setup_activations(app)
