"""``tv-attention``: the attention pattern of every layer and head of a model, as a grid of small maps.

Everything of the kind is here, declared once in :data:`KIND`: the directive (:mod:`.directive`)
names the model, its token ids and their labels; the worker builds the model (``execute/worker/lm_inputs.py``,
the one place a model reference is resolved), runs one forward pass and keeps every layer's weights
(:mod:`.run`, :mod:`.capture_torch`, :mod:`.capture_jax`, :mod:`.data`); the store checks them
(``schema.json``, :mod:`.checks`); the page draws the grid on one colour scale, a larger view and a
table per head, and names each head's strongest pattern (:mod:`.render`, :mod:`.grid`,
:mod:`.patterns`, :mod:`.describe`, :mod:`.pdf`); ``run.py``, ``tensorviz verify`` and ``tensorviz
show`` repeat, compare and summarise it (:mod:`.reproduce`, :mod:`.verify`, :mod:`.show`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config_values import ConfigValue, at_least
from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: the limit field of an attention grid's cells (maps times tokens squared), and its default
CELLS, DEFAULT_CELLS = "attention_cells", 32_768

KIND = declare(FigureKind(
    name="attention",
    directive="tv-attention",
    run=f"{__name__}.run:run_attention",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(CELLS, ConfigValue("tensorviz_max_attention_cells", DEFAULT_CELLS, (int,), """
            The largest attention grid, in cells (layers x heads x tokens x tokens), that `tv-attention`
            accepts. The default holds, for example, 8 layers of 4 heads over 32 tokens; every cell is
            drawn twice (in the grid and in its head's larger view) and tabled, so a larger grid makes a
            heavy page that no reader takes in. Name fewer `:layers:` or `:heads:`, or give fewer tokens.
            """, check=at_least(1), rebuild="", topic="limits"), f"{__name__}.checks:data_cells_problem"),),
    parts=f"{__name__}.render:attention_parts",
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
    framework_code="model",  # ``:frameworks:``: one model per framework, with shared weights
))


def setup_attention(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind
    from .directive import AttentionDirective

    add_figure_kind(app, KIND, AttentionDirective)
