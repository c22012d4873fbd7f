"""``tv-bar``: a 1-D result drawn as labelled bars. A figure kind from outside sphinx-tensorviz, whole
in this package: add ``"barchart"`` to ``extensions`` and nothing of the package changes.

:data:`KIND` tells every stage where its part of the kind is: the directive (:mod:`.directive`), the
worker's entry (:mod:`.run`), the store's checks (``schema.json``, :mod:`.checks`), the drawing
(:mod:`.render`, :mod:`.drawing`), and what ``run.py``, ``tensorviz verify`` and ``tensorviz show``
do with it (:mod:`.reproduce`, :mod:`.verify`, :mod:`.show`), and its cells in a lesson's notebook
(:mod:`.notebook`). A declaration names code by
``module:function`` and imports none of it, so a worker that imports this package for :mod:`.run`
loads neither Sphinx nor the drawing.
"""

from __future__ import annotations

from typing import Any

from sphinx_tensorviz.core.config_values import ConfigValue, at_least
from sphinx_tensorviz.core.kinds import FigureKind, SizeLimit, declare

#: the limit's field in a job and a failure record, and its default
BARS, DEFAULT_BARS = "bars", 64

KIND = declare(FigureKind(
    name="bar",
    directive="tv-bar",
    run=f"{__name__}.run:run_bar",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(BARS, ConfigValue("tensorviz_max_bars", DEFAULT_BARS, (int,), """
            The most bars `tv-bar` draws: past a few dozen, labels overlap and a table reads better.
            """, check=at_least(1, integer=True), rebuild="", topic="limits"),
        f"{__name__}.checks:data_bars_problem"),),
    parts=f"{__name__}.render:bar_parts",
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
    notebook=f"{__name__}.notebook:bar_cells",
))


def setup(app: Any) -> dict[str, Any]:
    # imported here: a worker imports this package for :mod:`.run` and needs no Sphinx
    from sphinx_tensorviz.render.registry import add_figure_kind

    from .directive import BarDirective

    add_figure_kind(app, KIND, BarDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
