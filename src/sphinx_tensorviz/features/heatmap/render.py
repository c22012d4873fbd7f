"""A heatmap artifact as :class:`FigureParts`: SVG, alt text, description and data table."""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.i18n import N_, _
from ...render.cache import artifact_key
from ...render.cell_grid import cell_grid_svg
from ...render.checks import checks_list
from ...render.colors import DIVERGING_DEFAULT, SEQUENTIAL_DEFAULT, Scale
from ...render.numbers import fmt
from ...render.parts import FigureParts
from ...render.tables import MAX_CELLS, data_table
from ...warnings_ import Subtype
from .describe import heatmap_alt, heatmap_long_description
from .pdf import heatmap_pdf

#: said under a heatmap of a complex result, whose imaginary part is not drawn (translated where shown)
COMPLEX_NOTE = N_("The result is complex: the cells and the table show its real part only.")


def shown_data(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The data as the page shows it: the author's ``:unit:`` in the page's language."""
    return {**data, "unit": ctx.words(data["unit"])} if data.get("unit") else data


def heatmap_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = shown_data(artifact["data"], ctx)
    colormap = render.get("colormap") or (DIVERGING_DEFAULT if data["diverging"] else SEQUENTIAL_DEFAULT)
    title = render.get("title") or (_("Heatmap of {unit}").format(unit=data["unit"]) if data["unit"] else _("Heatmap"))
    alt = render.get("alt") or heatmap_alt(data)
    # a sweep shares one colour scale across its points (``render["scale"]``: [low, high])
    limits = tuple(render["scale"]) if render.get("scale") else None
    scale = Scale(colormap, limits[0], limits[1], data["diverging"]) if limits else None
    svg = ctx.cache.svg(artifact_key(artifact), renderer_hash,
                        partial(cell_grid_svg, data, title=title, alt=alt, colormap=colormap, scale=scale))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", heatmap_long_description(data, colormap), classes=["tv-longdesc"]))
    warnings = []
    if data.get("complexPart") == "real":
        details.append(nodes.paragraph("", _(COMPLEX_NOTE), classes=["tv-longdesc", "tv-complex"]))
        warnings.append((f"the result is complex ({data.get('dtype', 'complex')}): only its real part is drawn; "
                         "return .real, abs() or angle() to say which part to show", Subtype.bad_result))
    rows, cols = data["rows"], data["columns"]
    if len(rows) * len(cols) <= MAX_CELLS:
        cells = [[fmt(v) for v in row] for row in data["values"]]
        details.append(data_table(_("Data: {unit}").format(unit=data["unit"] or _("values")), "", rows, cols, cells))
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    return FigureParts(
        title=title,
        alt=alt,
        svg=svg,
        details=details,
        draw_pdf=lambda path: heatmap_pdf(data, path, title, colormap, limits),
        warnings=warnings,
    )
