"""``tv-activations``: each checkpoint drawn the way its layout reads, with axes named.

The record (see :mod:`sphinx_tensorviz.features.graph.activation_records`) says what the tensor is:

* ``tokens`` / ``features``: a one-row strip of feature values (one token's vector);
* ``channels``: small multiples, one map per channel, plus the channel-mean map;
* ``heads``: one attention map per head (query tokens down, key tokens across), on a
  sequential scale (probabilities);
* ``channels-length``: one heatmap, a row per channel along the positions (1-D convolutions).

Every figure names its axes in the label and the text alternative, and the numbers are
in a table. A record whose layout could not be inferred is a located warning on the
``tv-activations`` directive, not a guess. Records written before layouts existed
(no ``layout`` key) are token strips, as they always were.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from docutils import nodes

from ....core.hashing import digest
from ....core.i18n import _, counted, translated_render
from ....core.request import renderer_fingerprint
from ....render import svg
from ....render.assemble import prediction_node
from ....render.bidi import isolated
from ....render.cache import RenderCache, artifact_key
from ....render.html_nodes import markup as html_markup
from ....render.html_nodes import scroll_region, tv_html_tag
from ....render.ids import slugify
from ....render.numbers import fmt
from ....render.page import Page
from ....render.sweep_figures import per_point, point_figure_id, switcher
from ....render.tables import data_table
from ....warnings_ import Subtype, warn
from ..page import GraphOnPage, drawn_from_graph, graph_for, swept_graphs
from .directive import tensorviz_activations

__all__ = ["activations_figure", "render_activations"]


def render_activations(page: Page) -> None:
    """The page pass: each ``tv-activations`` drawn from its graph's artifact; for a swept graph one
    set per point, following the graph's controls."""
    for strips in list(page.document.findall(tensorviz_activations)):
        strips["render"] = translated_render(strips["render"], page.ctx.words)  # the author's, in the page's language
        graph = graph_for(page, strips, "tv-activations")
        if graph is None:
            strips.replace_self([])
            continue

        def make(strips: tensorviz_activations = strips, graph: GraphOnPage = graph) -> nodes.Node:
            return isolated(_drawn(strips, graph, page))

        owner = swept_graphs(page).get(strips["graph"])  # a swept graph's points are read as drawn
        strips.replace_self(drawn_from_graph(page, strips, graph, make, sweep=owner and [
            owner[0], [point.request.content_hash for point in owner[1].points]]))


def _drawn(strips: tensorviz_activations, graph: GraphOnPage, page: Page) -> nodes.Node:
    owner = swept_graphs(page).get(strips["graph"])
    if owner is None:
        return activations_figure(strips, graph, page.html, page.ctx.cache, page.ctx.language)
    graph_id, sweep = owner

    def draw(copy: nodes.Element, number: int) -> nodes.Node:
        found = page.store.read_artifact(sweep.points[number].request.content_hash)
        if not isinstance(found, dict):  # the graph's own figure warns about it
            return nodes.paragraph("", _("This point has not been computed."))
        point = GraphOnPage(point_figure_id(graph_id, number), found, graph.depth, graph.expand)
        return activations_figure(copy, point, page.html, page.ctx.cache, page.ctx.language)

    return switcher(strips["figure_id"], [], sweep, per_point(strips, sweep, draw), page.html, follows=graph_id)


def activations_figure(node: tensorviz_activations, graph: GraphOnPage, html: bool,
                       cache: RenderCache, language: str = "") -> nodes.Element:
    """The checkpoints of ``graph`` under one heading (drawn in ``language``: :attr:`RenderContext.language`)."""
    records = graph.artifact["data"].get("activations") or {}
    fid = node["figure_id"]
    render = node["render"]
    if html:
        box: nodes.Element = tv_html_tag(tag="div", attrs={"class": "tv-activations", "id": fid})
    else:
        box = nodes.container(classes=["tv-activations"], ids=[fid])
    if render.get("title"):
        box += nodes.paragraph("", "", nodes.strong("", render["title"]))
    if render.get("prediction"):
        box += prediction_node(render["prediction"])
    box.extend(child.deepcopy() for child in node.children)
    if not records:
        warn("the graph records no activations; give it :checkpoints:", Subtype.option, location=node)
        return box
    for name, record in records.items():
        if record.get("problem") or ("layout" in record and record["layout"] is None):
            message = f"checkpoint {name!r}: {record.get('problem') or 'unknown layout'}"
            warn(message, Subtype.layout, location=node)
            box += nodes.paragraph("", message, classes=["tv-checkpoint-problem"])
            continue
        if record.get("complexPart") == "real":
            warn(f"checkpoint {name!r} is complex ({record.get('dtype', 'complex')}): only its real part is drawn; "
                 "checkpoint a real tensor (.real, .abs()) to choose", Subtype.bad_result, location=node)
        cached = partial(cache.svg, artifact_key(graph.artifact),
                         digest({"checkpoint": name, "renderer": renderer_fingerprint(),
                                 **({"language": language} if language else {})}))
        box += checkpoint(name, record, f"{fid}-{slugify(name)}", html, cached)
    return box


def checkpoint(name: str, record: dict[str, Any], cid: str, html: bool,
               cached: Callable[[Callable[[], str]], str]) -> nodes.Element:
    """One checkpoint: label, picture (HTML), metrics and the numbers as a table."""
    layout = record.get("layout") or "tokens"
    label, picture, table = _DRAWERS.get(layout, _maps)(name, record, cid)
    summary = _summary(record, layout)
    if html:
        box: nodes.Element = tv_html_tag(tag="div", attrs={"class": "tv-checkpoint", "id": cid,
                                                           "data-checkpoint": name, "data-layout": layout})
    else:
        box = nodes.container(classes=["tv-checkpoint"], ids=[cid])
    box += nodes.paragraph("", label, classes=["tv-checkpoint-label"])
    if html:
        alt = _("{label}. {summary}.").format(label=label, summary=summary)
        markup = cached(partial(picture, alt)).replace(svg.ID_TOKEN, cid)
        box += scroll_region(html_markup(f'<div class="tv-svg">{markup}</div>'),
                             _("Activations at {name}").format(name=name))
    box += nodes.paragraph("", summary, classes=["tv-checkpoint-metrics"])
    table["ids"] = [f"{cid}-table"]
    box += scroll_region(table, _("Values at {name}").format(name=name)) if html else table
    return box


def _summary(record: dict[str, Any], layout: str) -> str:
    metrics = record["metrics"]
    what = {"channels": _("Channel values: RMS"), "channels-length": _("Channel values: RMS"),
            "heads": _("Head values: RMS")}.get(layout) or _("Feature RMS")
    text = _("{what} {rms} · min {min} · max {max}").format(what=what, rms=fmt(metrics["rms"]),
                                                            min=fmt(metrics["min"]), max=fmt(metrics["max"]))
    if "heads" in metrics:
        text += f" · {counted(metrics['heads'], 'head', 'heads')}"
    if layout in ("channels", "heads") and record.get("pooledTo"):
        pooled = "×".join(map(str, record["pooledTo"]))
        text += " · " + _("maps mean-pooled to {shape} for drawing").format(shape=pooled)
    if record.get("complexPart") == "real":
        text += " · " + _("the real part of complex values")
    if layout == "channels-length" and record.get("step", 1) > 1:
        text += " · " + _("positions mean-pooled in runs of {step} for drawing").format(step=record["step"])
    return text


def _strip(name: str, record: dict[str, Any], cid: str) -> tuple[str, Callable[[str], str], nodes.table]:
    """A feature vector as a one-row heatmap; tokens say which token it is."""
    values = record["values"]
    if record.get("layout", "tokens") == "tokens":
        label = _("{name}: token {token}, {features} (axis: feature)").format(
            name=name, token=record["token"], features=counted(len(values), "feature", "features"))
        row = _("token {token}").format(token=record["token"])
    else:
        label = _("{name}: {features} (axis: feature; no token axis)").format(
            name=name, features=counted(len(values), "feature", "features"))
        row = _("features")
    columns = [f"f{j}" for j in range(len(values))]
    data = {"values": [values], "rows": [row], "columns": columns, "unit": "activation", "diverging": True}
    table = data_table(_("Values at {name}").format(name=name), "", [row], columns, [[fmt(v) for v in values]])
    return label, lambda alt: _heatmap_svg(data, title=label, alt=alt, colormap=None), table


def _maps(name: str, record: dict[str, Any], cid: str) -> tuple[str, Callable[[str], str], nodes.table]:
    """Channel or head maps as small multiples, plus (channels) the channel-mean map."""
    layout = record["layout"]
    axes = record.get("axes") or []
    unit = _("channel") if layout == "channels" else _("head")
    count = record["count"]
    height, width = record["mapShape"]
    units = (counted(count, "channel", "channels") if layout == "channels" else counted(count, "head", "heads"))
    label = _("{name}: {units} of {height}×{width} (rows: {rows}, columns: {columns})").format(
        name=name, units=units, height=height, width=width, rows=axes[1] if len(axes) > 1 else _("rows"),
        columns=axes[2] if len(axes) > 2 else _("columns"))
    shown = len(record["maps"])
    if shown < count:
        label += _("; the first {shown} drawn").format(shown=shown)
    titles = [f"{unit} {k}" for k in range(shown)]
    maps = list(record["maps"])
    if layout == "channels":
        maps.append(record["mean"])
        titles.append(_("channel mean"))
    columns = [f"{unit} {k}" for k in range(len(record["values"]))]
    caption = (_("Mean value of each channel at {name}") if layout == "channels"
               else _("Mean value of each head at {name}")).format(name=name)
    table = data_table(caption, "", [_("mean")], columns,
                       [[fmt(v) for v in record["values"]]])
    return label, lambda alt: _small_multiples_svg(maps, titles, title=label, alt=alt,
                                                      diverging=layout == "channels"), table


def _channel_rows(name: str, record: dict[str, Any], cid: str) -> tuple[str, Callable[[str], str], nodes.table]:
    """Channels x length as one heatmap: a row per channel, a column per position (or pooled run)."""
    matrix, step = record["matrix"], record.get("step", 1)
    count, length = record["count"], record["length"]
    label = _("{name}: {channels} × length {length} (rows: channel, columns: position)").format(
        name=name, channels=counted(count, "channel", "channels"), length=length)
    if len(matrix) < count:
        label += _("; the first {channels} drawn").format(channels=counted(len(matrix), "channel", "channels"))
    rows = [_("channel {number}").format(number=k) for k in range(len(matrix))]
    columns = [f"p{j * step}" if step == 1 else f"p{j * step}–{j * step + step - 1}" for j in range(len(matrix[0]))]
    data = {"values": matrix, "rows": rows, "columns": columns, "unit": "activation", "diverging": True}
    table = data_table(_("Mean value of each channel at {name}").format(name=name), "", [_("mean")],
                       [_("channel {number}").format(number=k) for k in range(len(record["values"]))],
                       [[fmt(v) for v in record["values"]]])
    return label, lambda alt: _heatmap_svg(data, title=label, alt=alt, colormap=None), table


#: how each layout is drawn (channel and head maps otherwise)
_DRAWERS: dict[str, Callable[[str, dict[str, Any], str], tuple[str, Callable[[str], str], nodes.table]]] = {
    "tokens": _strip, "features": _strip, "channels-length": _channel_rows}


# The SVG drawing code is imported when a checkpoint is first drawn: a build whose checkpoints all
# come from the drawing cache, or were kept translated (render/part_cache.py), never loads it.

def _heatmap_svg(*args: Any, **kwargs: Any) -> str:
    from ....render.cell_grid import cell_grid_svg

    return cell_grid_svg(*args, **kwargs)


def _small_multiples_svg(*args: Any, **kwargs: Any) -> str:
    from .maps_svg import small_multiples_svg

    return small_multiples_svg(*args, **kwargs)
