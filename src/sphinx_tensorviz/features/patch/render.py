"""A patching artifact as :class:`FigureParts`: the heatmap, its words, and the data table with both
baselines, for every builder."""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.i18n import N_, _
from ...render.cache import artifact_key
from ...render.cell_grid import cell_grid_svg
from ...render.checks import checks_list
from ...render.colors import DIVERGING_DEFAULT, Scale
from ...render.numbers import fmt
from ...render.parts import FigureParts
from ...render.tables import MAX_CELLS, data_table
from .describe import baselines, patch_alt, patch_long_description, patch_title, shown_columns, shown_rows
from .pdf import patch_pdf

#: the colour bar's label (translated where shown)
UNIT = N_("fraction restored")


def grid_data(data: dict[str, Any]) -> dict[str, Any]:
    """The cell grid's input: the effects, signed."""
    return {"values": data["effects"], "rows": shown_rows(data), "columns": shown_columns(data), "unit": _(UNIT),
            "diverging": True}


def effect_scale(data: dict[str, Any], colormap: str) -> Scale:
    """Centred on zero and reaching at least -1 and 1, so full restoration always has the same colour and
    a small effect does not look like a full one."""
    limit = max([1.0, *(abs(value) for row in data["effects"] for value in row)])
    return Scale(colormap, -limit, limit, True)


def patch_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    colormap = DIVERGING_DEFAULT
    title = patch_title(data, render.get("title"))
    alt = render.get("alt") or patch_alt(data)
    scale = effect_scale(data, colormap)
    svg = ctx.cache.svg(artifact_key(artifact), renderer_hash,
                        partial(cell_grid_svg, grid_data(data), title=title, alt=alt, colormap=colormap, scale=scale))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", patch_long_description(data, colormap), classes=["tv-longdesc"]))
    if len(data["rows"]) * len(data["columns"]) <= MAX_CELLS:
        cells = [[fmt(value) for value in row] for row in data["effects"]]
        stub = _("layer \\ head") if data["patch"] == "heads" else _("layer \\ position")
        details.append(data_table(_("Data: {unit} ({baselines})").format(unit=_(UNIT), baselines=baselines(data)),
                                  stub, shown_rows(data), shown_columns(data), cells))
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    return FigureParts(title=title, alt=alt, svg=svg, details=details,
                       draw_pdf=partial(patch_pdf, grid_data(data), title=title, colormap=colormap, scale=scale))
