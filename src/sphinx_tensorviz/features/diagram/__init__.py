"""Authored diagrams: ``tv-graph`` with ``:diagram:`` draws positioned boxes and curved edges as given.

A variant of the graph feature's directive (:func:`sphinx_tensorviz.read.variants.add_variant`)
and an authored figure kind: nothing is executed, the diagram is validated when read
(:mod:`.directive`) and drawn by :mod:`.render`.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ...read.variants import add_variant
from ...render.registry import add_authored_kind, lazy
from .directive import KIND, is_diagram, run_diagram


def setup_diagram(app: Sphinx) -> None:
    add_variant(app, "tv-graph", is_diagram, run_diagram)
    add_authored_kind(app, KIND, lazy(f"{__name__}.render:diagram_figure"))
