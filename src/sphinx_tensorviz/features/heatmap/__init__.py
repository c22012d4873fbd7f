"""``tv-heatmap``: a 2-D array computed by lesson code, drawn as an accessible heatmap.

Everything of the kind is here, declared once in :data:`KIND`: the directive (:mod:`.directive`)
describes the computation; the worker runs it (:mod:`.run`, :mod:`.data`); the store checks its data
(``schema.json``, :mod:`.checks`); the page draws it (:mod:`.render`, :mod:`.describe`, :mod:`.pdf`),
a sweep of it as small multiples on one colour scale (:mod:`.sweep`); ``run.py``, ``tensorviz
verify`` and ``tensorviz show`` repeat, compare and summarise it (:mod:`.reproduce`, :mod:`.verify`,
:mod:`.show`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: the limit field of a heatmap's cells (rows times columns), and its default
CELLS, DEFAULT_CELLS = "heatmap_cells", 16_384

KIND = declare(FigureKind(
    name="heatmap",
    directive="tv-heatmap",
    run=f"{__name__}.run:run_heatmap",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(CELLS, "tensorviz_max_heatmap_cells", DEFAULT_CELLS,
                      "Largest heatmap (rows times columns) a tv-heatmap draws.",
                      f"{__name__}.checks:data_cells_problem"),),
    parts=f"{__name__}.render:heatmap_parts",
    sweep=f"{__name__}.sweep:sweep_parts",
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
))


def setup_heatmap(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind
    from .directive import HeatmapDirective

    add_figure_kind(app, KIND, HeatmapDirective)
