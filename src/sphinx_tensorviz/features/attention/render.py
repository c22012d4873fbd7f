"""An attention artifact as :class:`FigureParts`: the grid, a larger view and a table per head, words.

The grid is the picture every builder gets (SVG, or PDF for LaTeX). On an HTML page each head also
has its larger view in a native ``<details>``, so every head can be enlarged without JavaScript; each
head's sentence, and its table (a row per query, a column per key) while a table stays readable
(``render.tables.MAX_CELLS``), are in every builder's output.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.hashing import digest
from ...core.i18n import _
from ...render import svg
from ...render.cache import artifact_key
from ...render.cell_grid import cell_grid_svg
from ...render.checks import checks_list
from ...render.colors import SEQUENTIAL_DEFAULT
from ...render.html_nodes import markup
from ...render.numbers import fmt
from ...render.parts import FigureParts
from ...render.svg_writer import write
from ...render.tables import MAX_CELLS, data_table
from .describe import (
    attention_alt,
    attention_long_description,
    display_tokens,
    head_patterns,
    head_sentence,
    map_title,
)
from .grid import attention_scale, grid_drawing, head_data
from .patterns import Pattern
from .pdf import attention_pdf


def attention_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    colormap = SEQUENTIAL_DEFAULT
    title = render.get("title") or _("Attention weights by layer and head")
    alt = render.get("alt") or attention_alt(data)
    key = artifact_key(artifact)
    grid = ctx.cache.svg(key, renderer_hash, partial(_grid_svg, data, title, alt, colormap))
    patterns = head_patterns(data)
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", attention_long_description(data, colormap), classes=["tv-longdesc"]))
    details.append(_sentences(data, patterns))
    tokens = display_tokens(data["tokens"])
    for item, pattern in zip(data["maps"] if len(tokens) ** 2 <= MAX_CELLS else (), patterns):
        cells = [[fmt(w) for w in row] for row in item["weights"]]
        details.append(data_table(_("Data: {what}").format(what=head_sentence(item, pattern)), _("query \\ key"),
                                  tokens, tokens, cells))
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    return FigureParts(
        title=title,
        alt=alt,
        svg=grid,
        details=details,
        extra_html=[_larger_views(data, patterns, key, renderer_hash, colormap, ctx)],
        draw_pdf=partial(attention_pdf, data, title=title, colormap=colormap),
    )


def _grid_svg(data: dict[str, Any], title: str, alt: str, colormap: str) -> str:
    return write(grid_drawing(data, title=title, alt=alt, colormap=colormap))


def _sentences(data: dict[str, Any], patterns: list[Pattern]) -> nodes.Element:
    """Each head's strongest pattern, as a list every builder shows."""
    box = nodes.bullet_list(classes=["tv-attention-patterns"])
    for item, pattern in zip(data["maps"], patterns):
        box += nodes.list_item("", nodes.paragraph("", head_sentence(item, pattern)))
    return box


def _larger_views(data: dict[str, Any], patterns: list[Pattern], key: str, renderer_hash: str, colormap: str,
                  ctx: Any) -> nodes.Element:
    """Each head drawn large with its weights in the cells, in a ``<details>`` of its own (HTML only).

    One markup block at the top of ``extra_html``: the figure's id replaces :data:`svg.ID_TOKEN` only
    there, and each view's ids must be its figure's (a page holds several grids)."""
    scale = attention_scale(colormap)
    views = []
    for number, (item, pattern) in enumerate(zip(data["maps"], patterns)):
        name = map_title(item)
        # a drawing of its own: the cache names an entry by its key's first characters
        drawing = ctx.cache.svg(digest({"recording": key, "head": number}), renderer_hash, partial(
            cell_grid_svg, head_data(data, item), title=_("Attention weights of {head}").format(head=name),
            alt=head_sentence(item, pattern), colormap=colormap, scale=scale))
        # at its natural size (text >= 12 px), scrolling sideways inside its region on a phone
        summary = _("Enlarge {head}: {pattern}").format(head=name, pattern=pattern.sentence())
        region = _("{head}, enlarged").format(head=name)
        views.append(f'<details class="tv-reveal tv-attention-head"><summary>'
                     f'{svg.text(summary)}</summary>\n'
                     f'<div class="tv-scroll" tabindex="0" role="region" aria-label={svg.attr(region)}>'
                     f'<div class="tv-svg">{drawing.replace(svg.ID_TOKEN, f"{svg.ID_TOKEN}-h{number}")}</div></div>'
                     '</details>')
    return markup(f'<div class="tv-attention-heads">{"".join(views)}</div>')
