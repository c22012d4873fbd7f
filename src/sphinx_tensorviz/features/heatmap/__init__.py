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

from ...core.config_values import ConfigValue, at_least
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
    limits=(SizeLimit(CELLS, ConfigValue("tensorviz_max_heatmap_cells", DEFAULT_CELLS, (int,), """
            The largest heatmap, in cells (rows times columns), that `tv-heatmap` accepts. The default is
            128 x 128: each cell is drawn, with a tooltip, so a heatmap at the limit adds about 2 MB to its
            page; a wider one is unreadable anyway. Downsample larger arrays in the lesson code
            (`values[::4, ::4]`, a block mean, or the first rows that matter).
            """, check=at_least(1), rebuild="", topic="limits"), f"{__name__}.checks:data_cells_problem"),),
    parts=f"{__name__}.render:heatmap_parts",
    sweep=f"{__name__}.sweep:sweep_parts",
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
    framework_code="source",  # ``:frameworks:``: ``:torch: file.py:function`` is that framework's code
))


def setup_heatmap(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind
    from .directive import HeatmapDirective

    add_figure_kind(app, KIND, HeatmapDirective)
