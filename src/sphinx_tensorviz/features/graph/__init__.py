"""``tv-graph``: a model traced once in a worker, drawn as a navigable, accessible graph.

Everything of the kind is here, declared once in :data:`KIND`. The directive (:mod:`.directive`)
describes the model and its inputs; the worker traces one forward pass (:mod:`.run`, on the capture
code of :mod:`.capture`, filtered by :mod:`.filter`); the store checks its data (``schema.json``,
:mod:`.checks`); the page draws the default view (:mod:`.layout`, :mod:`.view`, :mod:`.svg`,
:mod:`.frames`) with its outline and source panels (:mod:`.outline`, :mod:`.render`, :mod:`.sources`).
A sweep of a graph is drawn as one figure per point by the common renderer. A page pass checks
``:expand:`` against the recorded graph (:mod:`.expand`). Tours (:mod:`.tour`) and activation strips
(:mod:`.activations`) are its sub-features: they read what a graph recorded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config_values import ConfigValue, at_least
from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: checking ``:expand:`` names needs nothing from the other page passes
EXPAND_ORDER = 5

#: the limit field of a graph's nodes, and its default (a 24-layer Llama is about 1,700 nodes)
NODES, DEFAULT_NODES = "graph_nodes", 20_000

#: Bumped whenever a backend's capture changes what a ``tv-graph`` artifact holds, so stale graphs
#: are re-recorded. Hashed only from version 2 on, which leaves artifacts of an unchanged capture
#: (version 1) valid. JAX 2: library module paths, named weights, function groups, checkpoints;
#: JAX 3: op ids spelled as PyTorch's (``block.ffn.dot_general_0``). PyTorch 2: named outputs,
#: function groups, library sources, attention params, activation layouts; PyTorch 3: no-ops
#: (``.to()`` to the same dtype) are not recorded, method groups are ``Class.method()``.
CAPTURE_VERSIONS = {"torch": 3, "jax": 3}

KIND = declare(FigureKind(
    name="graph",
    directive="tv-graph",
    run=f"{__name__}.run:run_graph",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(NODES, ConfigValue("tensorviz_max_graph_nodes", DEFAULT_NODES, (int,), """
            The largest traced graph, in nodes, that `tv-graph` accepts. The default is well above real
            models (a 24-layer Llama decoder is about 1,700 nodes); trace a smaller configuration otherwise.
            """, check=at_least(1), rebuild="", topic="limits"), f"{__name__}.checks:nodes_problem"),),
    parts=f"{__name__}.render:graph_parts",
    # a catalogue preview shows the top level only, without the legend: the boxes at thumbnail size
    thumbnail_render={"depth": 1, "preview": True},
    scripts=("tensorviz/tensorviz-graph.js",),  # expand, collapse and follow a graph; its tours
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
    framework_code="model",  # ``:frameworks:``: one model per framework, with shared weights
))


def setup_graph(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind, add_page_pass, lazy
    from .activations import setup_activations
    from .directive import GraphDirective
    from .tour import setup_tour

    add_figure_kind(app, KIND, GraphDirective)
    add_page_pass(app, EXPAND_ORDER, lazy(f"{__name__}.expand:check_expand"))
    setup_tour(app)  # tours and activation strips read this kind's recordings: its sub-features
    setup_activations(app)
