"""``tv-lens``: the logit lens of a causal language model, as a layer x position heatmap.

After each block, the residual stream is read through the model's own final norm and unembedding,
as if the model stopped there: each cell is the probability of the target token (the next input
token, or ``:target:``) at one layer and position, with the top-1 token written in it.

Everything of the kind is here, declared once in :data:`KIND`: the directive (:mod:`.directive`)
names the model, its token ids, their labels and, where the model lacks the shared shape, its
pieces; the worker builds the model (``execute/worker/lm_inputs.py``), finds its pieces
(``execute/worker/causal_lm.py``), keeps each block's output in one forward pass (:mod:`.lens_torch`,
:mod:`.lens_jax`) and turns the read-out logits into probabilities and top-k lists (:mod:`.data`);
the store checks them (``schema.json``, :mod:`.checks`); the page draws and words them
(:mod:`.grid`, :mod:`.describe`, :mod:`.render`, :mod:`.pdf`); ``run.py``, ``tensorviz verify`` and
``tensorviz show`` repeat, compare and summarise it (:mod:`.reproduce`, :mod:`.verify`, :mod:`.show`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config_values import ConfigValue, at_least
from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: the limit field of a lens's cells (layers times positions), and its default
CELLS, DEFAULT_CELLS = "lens_cells", 1024

KIND = declare(FigureKind(
    name="lens",
    directive="tv-lens",
    run=f"{__name__}.run:run_lens",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(CELLS, ConfigValue("tensorviz_max_lens_cells", DEFAULT_CELLS, (int,), """
            The largest logit lens, in cells (layers x positions), that `tv-lens` accepts. Each cell is
            drawn with its top-1 token written in it and tabled with its top-k tokens, so a larger lens
            makes a heavy page that no reader takes in. Give fewer tokens, or raise the limit.
            """, check=at_least(1), rebuild="", topic="limits"), f"{__name__}.checks:data_cells_problem"),),
    parts=f"{__name__}.render:lens_parts",
    reproduce=f"{__name__}.reproduce",
    framework_code="model",  # ``:frameworks:``: one model per framework, with shared weights
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
))


def setup_lens(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind
    from .directive import LensDirective

    add_figure_kind(app, KIND, LensDirective)
