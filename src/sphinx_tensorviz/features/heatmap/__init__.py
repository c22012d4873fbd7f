"""``tv-heatmap``: a 2-D array computed by lesson code, drawn as an accessible heatmap.

The directive (:mod:`.directive`) describes the computation; the worker runs it
(:mod:`.run`, named in :data:`~sphinx_tensorviz.core.protocol.RUNNERS`); the page draws the
artifact (:mod:`.render`), a sweep of it as small multiples on one colour scale (:mod:`.sweep`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup_heatmap(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_executed_kind, lazy
    from .directive import HeatmapDirective

    app.add_directive("tv-heatmap", HeatmapDirective)
    add_executed_kind(app, "tv-heatmap", lazy(f"{__name__}.render:heatmap_parts"),
                      sweep=lazy(f"{__name__}.sweep:sweep_parts"))
