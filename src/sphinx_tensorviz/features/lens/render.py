"""A logit lens artifact as :class:`FigureParts`: the grid, the words, and two tables.

The grid is the picture every builder gets (SVG, or PDF for LaTeX). The long description says the
result; the tables (a row per position, a column per layer) give the target's probability and each
cell's top-k tokens, while a table stays readable (``render.tables.MAX_CELLS``), in every builder.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.i18n import _, counted
from ...render.cache import artifact_key
from ...render.checks import checks_list
from ...render.colors import SEQUENTIAL_DEFAULT
from ...render.numbers import fmt
from ...render.parts import FigureParts
from ...render.svg_writer import write
from ...render.tables import MAX_CELLS, data_table
from .describe import (
    column_labels,
    layer_labels,
    lens_alt,
    lens_long_description,
    target_words,
    token_label,
    top_k_words,
)
from .grid import lens_drawing
from .pdf import lens_pdf


def lens_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    colormap = SEQUENTIAL_DEFAULT
    title = render.get("title") or _("What each layer predicts (logit lens)")
    alt = render.get("alt") or lens_alt(data)
    grid = ctx.cache.svg(artifact_key(artifact), renderer_hash, partial(_svg, data, title, alt, colormap))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", lens_long_description(data, colormap), classes=["tv-longdesc"]))
    layers = layer_labels(data)
    rows = [f"{label} \u2192 {token_label(data, t)}" for label, t in zip(column_labels(data), data["targets"])]
    if len(rows) * len(layers) <= MAX_CELLS:
        by_position = list(zip(*data["probabilities"]))
        stub = _("position \u2192 target")
        details.append(data_table(_("Data: the probability {target}").format(target=target_words(data)), stub,
                                  rows, layers, [[fmt(p) for p in row] for row in by_position]))
        tokens = counted(len(data["topIds"][0][0]), "token", "tokens")
        details.append(data_table(_("Data: the top {tokens} and their probabilities").format(tokens=tokens), stub,
                                  rows, layers, [[top_k_words(data, layer, column) for layer in range(len(layers))]
                                                 for column in range(len(rows))]))
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    return FigureParts(title=title, alt=alt, svg=grid, details=details,
                       draw_pdf=partial(lens_pdf, data, title=title, colormap=colormap))


def _svg(data: dict[str, Any], title: str, alt: str, colormap: str) -> str:
    return write(lens_drawing(data, title=title, alt=alt, colormap=colormap))
