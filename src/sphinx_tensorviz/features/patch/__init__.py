"""``tv-patch``: activation patching of a causal language model, as a layer x position (or layer x
head) heatmap of how much of a metric each patched activation restores.

Everything of the kind is here, declared once in :data:`KIND`: the directive (:mod:`.directive`)
names the model, the clean and corrupted token ids, the metric and what to patch; the worker builds
the model (the shared :mod:`...execute.worker.lm_inputs`), finds its pieces
(:mod:`...execute.worker.causal_lm`), runs the batched patching (:mod:`.patch_torch`) and normalises
the effects (:mod:`.run`, :mod:`.metric`, :mod:`.data`); the store checks them (``schema.json``,
:mod:`.checks`); the page draws a diverging heatmap centred on zero and states the result in words
(:mod:`.render`, :mod:`.describe`, :mod:`.pdf`); ``run.py``, ``tensorviz verify`` and ``tensorviz
show`` repeat, compare and summarise it (:mod:`.reproduce`, :mod:`.verify`, :mod:`.describe`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config_values import ConfigValue, at_least
from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: the limit field of a patching figure's patched runs (one per cell), and its default
PASSES, DEFAULT_PASSES = "patch_passes", 4096

KIND = declare(FigureKind(
    name="patch",
    directive="tv-patch",
    run=f"{__name__}.run:run_patch",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(PASSES, ConfigValue("tensorviz_max_patch_passes", DEFAULT_PASSES, (int,), """
            The most patched forward passes one `tv-patch` may run: one per cell of its heatmap (layers x
            positions, or layers x heads), batched many to a forward call. The default holds, for example, 16
            layers over 256 positions; a larger model or input would run for a long time on CPU and draw a
            heatmap no reader takes in. Over it, the figure is not run and a warning gives the count: patch
            `heads` instead of positions, give a shorter input, or raise the limit.
            """, check=at_least(1), rebuild="", topic="limits"), f"{__name__}.checks:data_passes_problem"),),
    parts=f"{__name__}.render:patch_parts",
    reproduce=f"{__name__}.reproduce",
    framework_code="model",  # ``:frameworks:``: one model per framework, with shared weights
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.describe:summary",
))


def setup_patch(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...render.registry import add_figure_kind
    from .directive import PatchDirective

    add_figure_kind(app, KIND, PatchDirective)
