"""A laid-out model graph as shapes: inline, accessible, deterministic SVG, and the same picture on paper.

:func:`graph_drawing` describes the picture once (legend, boxes, edges, shape labels, the guided
tour's step markers); :func:`graph_to_svg` writes it for the page and :func:`.pdf.graph_pdf` draws
it for LaTeX. Why inline SVG rather than an image: nodes must be keyboard-focusable links to the
model source, text must stay text (searchable, zoomable, translatable), and the same input must
give the same bytes so that builds are reproducible and diffs are meaningful.

Accessibility choices (WCAG 2.2, W3C complex-images tutorial):

* the root is ``role="group"`` (not ``img``) because it contains focusable links, labelled by its
  ``<title>`` and ``<desc>``; every node carries its own ``<title>`` with op, id, params and shape;
* colour is never the only encoding: each kind also has its own border style or corner shape, and
  collapsed modules say ``▸ 12 ops`` in text; a legend explains both in words;
* text is ``currentColor`` on translucent tints, so it follows light and dark themes, and no text
  is smaller than 12 px;
* :func:`graph_outline` is the nested text alternative shown next to the figure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ...core.i18n import N_, _, counted
from ...render.ids import check_prefix, element_id, slugify
from ...render.shapes import (
    Arrowhead,
    Attrs,
    Circle,
    Drawing,
    Group,
    Paint,
    Path,
    Rect,
    Segment,
    Shape,
    StyleSheet,
    Text,
)
from ...render.svg_writer import css_paint, fragment, write
from .layout import (
    FONT_HEADER,
    FONT_LABEL,
    FONT_SUB,
    LINE_HEIGHT,
    Box,
    GraphLayout,
    shape_text,
    text_width,
)
from .outline import graph_outline

__all__ = ["draw_cluster", "draw_edge_label", "draw_node", "graph_drawing", "graph_outline", "graph_to_svg",
           "node_tone", "slugify"]

FONT_FAMILY = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
#: height / width of a catalogue preview at most: the thumbnail's own 3:2 box (a taller graph's top is shown)
PREVIEW_ASPECT = 2 / 3

# Okabe-Ito-derived mid tones: readable strokes on white and on dark backgrounds alike.
@dataclass(frozen=True)
class Tone:
    """How one family of nodes is drawn; the border style differs too, so colour is not the only cue."""

    color: str
    dash: str
    width: float
    name: str


TONES: dict[str, Tone] = {
    "io": Tone("#2f7fc1", "", 2.2, N_("input / output")),
    "layer": Tone("#8e5cc4", "", 1.4, N_("layer")),
    "op": Tone("#c26a00", "", 1.4, N_("op")),
    "param": Tone("#6b7785", "2 3", 1.6, N_("parameter")),
    "module": Tone("#18897a", "6 3", 1.6, N_("module (collapsed)")),
}


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def node_tone(node: Mapping[str, Any]) -> str:
    """Tone family of a node: io, layer, op (function call), param or module."""
    kind = node.get("kind")
    op = str(node.get("op") or "")
    if kind in ("input", "output"):
        return "io"
    if kind == "module":
        return "module"
    if op == "Parameter":
        return "param"
    if op.startswith(("torch.", "jax.", "lax.", "operator.")) or op == "Python" or "@" in str(node.get("id", "")):
        return "op"
    return "layer"


def _fmt_param(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_fmt_param(v) for v in value) + ")"
    return str(value)


def _source_lines(node: Mapping[str, Any]) -> Optional[str]:
    src = node.get("source")
    if not isinstance(src, Mapping) or src.get("line") is None:
        return None
    return f"{src['line']}-{src.get('endLine', src['line'])}"


def _source_file(node: Mapping[str, Any]) -> str:
    """The file a node's lines are in, when it is not the model file (``transformers/...py``)."""
    src = node.get("source")
    key = src.get("file") if isinstance(src, Mapping) else None
    return key if isinstance(key, str) else ""


def _source_attrs(node: Mapping[str, Any]) -> Attrs:
    """``data-source-lines`` (and ``data-source-file`` for another file) for the page script."""
    lines = _source_lines(node)
    if not lines:
        return ()
    key = _source_file(node)
    return (("data-source-lines", lines),) + ((("data-source-file", key),) if key else ())


def node_description(node: Mapping[str, Any], hidden: int = 0) -> str:
    """One-line text for a node's ``<title>``: op, id, params, output shape, source lines."""
    parts = [f"{node.get('op') or node.get('kind')}: {node.get('id')}"]
    params = node.get("params") or {}
    if isinstance(params, Mapping) and params:
        parts.append(", ".join(f"{k}={_fmt_param(v)}" for k, v in params.items()))
    if node.get("kind") == "module":
        parts.append(_("collapsed module, {ops} inside").format(ops=counted(hidden, "op", "ops")))
    shape = shape_text(node)
    if shape:
        dtype = (node.get("outputs") or [{}])[0].get("dtype")
        parts.append(_("output {shape}").format(shape=shape) + (f" {dtype}" if dtype else ""))
    lines = _source_lines(node)
    if lines:
        key = _source_file(node)
        parts.append((_("source lines {lines} of {file}") if key else _("source lines {lines}")).format(
            lines=lines.replace("-", "–"), file=key))
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------------------------

#: Edges and arrowheads are painted by class from the style sheet (see :func:`_style`).
EDGE_PAINT = Paint(fill="none", stroke="currentColor", stroke_opacity=0.7, stroke_width=1.3)
ARROW_PAINT = Paint(fill="currentColor", fill_opacity=0.8)
CLUSTER_PAINT = Paint(fill=TONES["module"].color, fill_opacity=0.05, stroke=TONES["module"].color,
                      stroke_opacity=0.6, stroke_width=1)
MARKER_PAINT = Paint(fill="#1f4e79", stroke="#ffffff", stroke_width=1.5)

Href = Optional[Callable[[dict], Optional[str]]]


def _style(p: str) -> StyleSheet:
    return StyleSheet(
        f"#{p}-svg text{{fill:currentColor;font-family:{FONT_FAMILY}}}"
        f"#{p}-svg .tv-edge{{{css_paint(EDGE_PAINT)}}}"
        f"#{p}-svg .tv-arrowhead{{{css_paint(ARROW_PAINT)}}}"
        f"#{p}-svg a:focus{{outline:none}}"
        f"#{p}-svg a:focus .tv-shape,#{p}-svg a:hover .tv-shape{{stroke-width:3.5;fill-opacity:.3}}"
        f"#{p}-svg a:focus-visible .tv-shape{{stroke:currentColor}}"
        f"#{p}-svg .tv-sub{{fill-opacity:.85}}"
    )


def _shape(tone: str, x: float, y: float, w: float, h: float, cls: str = "tv-shape") -> Rect:
    """A node's box: pill for input/output, round corners for ops, square for layers."""
    t = TONES[tone]
    rx = h / 2 if tone == "io" else (9.0 if tone == "op" else 2.0)
    return Rect(x, y, w, h, Paint(fill=t.color, fill_opacity=0.14, stroke=t.color, stroke_width=t.width, dash=t.dash),
                rx=rx, cls=cls)


def _module_shape(x: float, y: float, w: float, h: float) -> tuple[Rect, Rect]:
    """Collapsed module: dashed outer border plus a solid inner border (a 'stack' of ops)."""
    inner = Paint(fill="none", stroke=TONES["module"].color, stroke_width=0.8)
    return _shape("module", x, y, w, h), Rect(x + 3, y + 3, w - 6, h - 6, inner, rx=1.0)


def _labels(box: Box) -> list[Text]:
    lines = [(box.label, FONT_LABEL, "600", ""), (box.sublabel, FONT_SUB, "", "tv-sub")]
    lines = [ln for ln in lines if ln[0]]
    total = sum(size * LINE_HEIGHT for _, size, _, _ in lines)
    y = box.y + (box.h - total) / 2
    out = []
    for text, size, weight, cls in lines:
        y += size * LINE_HEIGHT
        baseline = y - size * (LINE_HEIGHT - 1) / 2 - size * 0.2
        out.append(Text(box.cx, baseline, text, size=size, anchor="middle", weight=weight, cls=cls))
    return out


def node_shape(box: Box, node: Mapping[str, Any], p: str, source_href: Href) -> Group:
    """One box with its labels and tooltip; a link to its source line when ``source_href`` gives one."""
    tone = node_tone(node)
    classes = f"tv-node tv-kind-{slugify(box.kind)} tv-tone-{tone}"
    if box.collapsed:
        classes += " tv-module tv-collapsed"
    attrs = (("data-node", box.id), *_source_attrs(node))
    if box.collapsed:
        attrs += (("data-hidden-count", str(box.hidden_count)),)
    title = node_description(node, box.hidden_count)
    shape = _module_shape(box.x, box.y, box.w, box.h) if box.collapsed else (_shape(tone, box.x, box.y, box.w, box.h),)
    body = (*shape, *_labels(box))
    href = source_href(dict(node)) if source_href else None
    if href:
        return Group((Group(body, href=href, tooltip=title),), id=element_id(p, "n", box.id), cls=classes, attrs=attrs)
    return Group(body, id=element_id(p, "n", box.id), cls=classes, attrs=attrs, tooltip=title)


def draw_node(box: Box, node: Mapping[str, Any], p: str, source_href: Href) -> str:
    """:func:`node_shape` as SVG markup, for the page script's module frames."""
    return fragment(node_shape(box, node, p, source_href))


def cluster_shape(box: Box, node: Mapping[str, Any], p: str, source_href: Href) -> Group:
    """An open module: a tinted frame behind its children, titled ``▾ name``."""
    rect = Rect(box.x, box.y, box.w, box.h, CLUSTER_PAINT, rx=8.0)
    text = "▾ " + box.label
    tw = text_width(text, FONT_HEADER)
    hx, anchor = box.x + 8, "start"
    if box.in_x is not None and hx - 4 <= box.in_x <= hx + tw + 4 and box.x + box.w - 8 - tw > box.in_x + 4:
        hx, anchor = box.x + box.w - 8, "end"  # keep the title clear of the incoming edges
    head: Shape = Text(hx, box.y + 18, text, size=FONT_HEADER, weight="600", anchor=anchor)
    href = source_href(dict(node)) if source_href else None
    if href:
        head = Group((head,), href=href)
    return Group((rect, head), id=element_id(p, "c", box.id), cls="tv-cluster",
                 attrs=(("data-node", box.id), *_source_attrs(node)), tooltip="module " + box.id)


def draw_cluster(box: Box, node: Mapping[str, Any], p: str, source_href: Href) -> str:
    """:func:`cluster_shape` as SVG markup, for the page script's module frames."""
    return fragment(cluster_shape(box, node, p, source_href))


def _edge_segments(points: tuple[tuple[float, float], ...]) -> tuple[Segment, ...]:
    """Polyline through the route; non-vertical hops become vertical-tangent cubic curves."""
    (x0, y0), rest = points[0], points[1:]
    out: list[Segment] = [("M", (x0, y0))]
    for x1, y1 in rest:
        if abs(x1 - x0) < 0.05:
            out.append(("L", (x1, y1)))
        else:
            my = (y0 + y1) / 2
            out.append(("C", (x0, my, x1, my, x1, y1)))
        x0, y0 = x1, y1
    return tuple(out)


def _edges(layout: GraphLayout, p: str) -> tuple[list[Shape], list[Shape]]:
    """Edge paths, and shape labels under each producer where the box leaves room for them."""
    paths: list[Shape] = []
    labels: list[Shape] = []
    heading: dict[str, list[float]] = {}
    for e in layout.edges:
        if len(e.points) < 2:
            continue
        paths.append(Path(_edge_segments(e.points), EDGE_PAINT, cls="tv-edge", styled=True, arrow=f"{p}-arrow",
                          attrs=(("data-source", e.source), ("data-target", e.target))))
        heading.setdefault(e.source, []).append(e.points[1][0] - e.points[0][0])
    labelled: set[str] = set()
    for e in layout.edges:
        if not e.label or e.source in labelled or len(e.points) < 2:
            continue
        labelled.add(e.source)
        label = edge_label_shape(layout.box(e.source), e, heading[e.source])
        if label:
            labels.append(label)
    return paths, labels


def edge_label_shape(src: Box, e: Any, dxs: list[float]) -> Optional[Text]:
    """Shape label just under the producer, on the side its out-edges do not head to."""
    x0, y0 = e.points[0]
    if e.points[1][1] - y0 < 16:
        return None
    need = text_width(e.label, FONT_SUB) + 6
    right_ok = need <= src.x + src.w - x0
    left_ok = need <= x0 - src.x
    go_right = sum(1 for d in dxs if d > 0.5) <= sum(1 for d in dxs if d < -0.5)
    if go_right and right_ok or (right_ok and not left_ok):
        x, anchor = x0 + 5, "start"
    elif left_ok:
        x, anchor = x0 - 5, "end"
    else:
        return None
    return Text(x, y0 + 13, e.label, size=FONT_SUB, anchor=anchor, cls="tv-edge-label",
                attrs=(("data-source", e.source),))


def draw_edge_label(src: Box, e: Any, dxs: list[float]) -> Optional[str]:
    """:func:`edge_label_shape` as SVG markup (``None`` where it does not fit)."""
    label = edge_label_shape(src, e, dxs)
    return fragment(label) if label else None


def _legend(width: float) -> tuple[Group, float]:
    """Legend in words *and* shapes; wraps onto more rows on narrow graphs."""
    items = [(tone, _(t.name)) for tone, t in TONES.items()] + [("cluster", "▾ " + _("open module"))]
    out: list[Shape] = []
    x, y = 8.0, 8.0
    for tone, name in items:
        label = name if tone != "module" else "▸ " + _("n ops: collapsed module")
        item_w = 26 + text_width(label, FONT_SUB) + 18
        if x > 8 and x + item_w > width:
            x, y = 8.0, y + 24
        if tone == "cluster":
            out.append(Rect(x, y, 20.0, 16.0, CLUSTER_PAINT, rx=4.0))
        elif tone == "module":
            out.extend(_module_shape(x, y, 20, 16))
        else:
            out.append(_shape(tone, x, y, 20, 16, cls="tv-legend-key"))
        out.append(Text(x + 26, y + 12.5, label, size=FONT_SUB))
        x += item_w
    return Group(tuple(out), cls="tv-legend"), y + 16 + 10


def _markers(layout: GraphLayout, markers: Mapping[str, Sequence[tuple[int, str]]]) -> list[Shape]:
    """Numbered circles on the boxes a guided tour visits: the tour reads on paper, without script.

    ``markers`` maps a visible box id to its (step number, step title) pairs; the circles sit on
    the box's top-right corner, side by side when several steps visit the same box.
    """
    out: list[Shape] = []
    for box in layout.boxes:
        circles: list[Shape] = []
        for k, (number, step_title) in enumerate(markers.get(box.id, ())):
            cx, cy = box.x + box.w - 4 - 22 * k, box.y + (4 if box.is_cluster else 0)
            circles.append(Group(
                (Circle(cx, cy, 10, MARKER_PAINT),
                 Text(cx, cy + 4.5, str(number), size=12, weight="700", anchor="middle", fill="#ffffff",
                      fill_as_style=True)),
                cls="tv-step-marker", attrs=(("data-step-number", str(number)),),
                tooltip=_("Step {number}: {title}").format(number=number, title=step_title)))
        if circles:  # grouped by box, so the page script moves them with it
            out.append(Group(tuple(circles), attrs=(("data-node", box.id),)))
    return out


def graph_to_svg(graph: Mapping[str, Any], layout: GraphLayout, *, id_prefix: str, title: str, desc: str,
                 source_href: Href = None, markers: Optional[Mapping[str, Sequence[tuple[int, str]]]] = None,
                 preview: bool = False) -> str:
    """Inline SVG (no XML declaration) for ``layout`` of ``graph``; byte-identical per input.

    ``id_prefix`` must be a valid, page-unique HTML id (letters, digits, ``-``, ``_``); every
    element id and the scoped ``<style>`` hang off it. ``source_href(node)`` may return a URL
    for a node's source line; such nodes become focusable links. ``markers`` numbers the boxes
    of a guided tour (see :func:`_markers`). A ``preview`` (a catalogue thumbnail) has no legend and
    is cut to the top of a tall graph (:data:`PREVIEW_ASPECT`), so a thumbnail shows its boxes.
    """
    return write(graph_drawing(graph, layout, id_prefix=id_prefix, title=title, desc=desc, source_href=source_href,
                               markers=markers, preview=preview))


def graph_drawing(graph: Mapping[str, Any], layout: GraphLayout, *, id_prefix: str, title: str, desc: str,
                  source_href: Href = None,
                  markers: Optional[Mapping[str, Sequence[tuple[int, str]]]] = None, preview: bool = False) -> Drawing:
    """The legend above, then open modules, edges, boxes, shape labels and tour markers, in
    that order (later ones on top). Boxes missing from ``graph`` are drawn from the layout alone."""
    check_prefix(id_prefix)
    p = id_prefix
    nodes = {str(n.get("id")): n for n in reversed(list(graph.get("layers") or ()))}
    width = max(layout.width, 360.0)
    legend, legend_h = _legend(width) if not preview else (Group(()), 0.0)
    clusters: list[Shape] = []
    body: list[Shape] = []
    for box in layout.boxes:
        node = nodes.get(box.id, {"id": box.id, "kind": box.kind, "op": box.op})
        if box.is_cluster:
            clusters.append(cluster_shape(box, node, p, source_href))
        else:
            body.append(node_shape(box, node, p, source_href))
    paths, edge_labels = _edges(layout, p)
    drawn = Group((Group(tuple(clusters), cls="tv-clusters"), Group(tuple(paths), cls="tv-edges"),
                   Group(tuple(body), cls="tv-nodes"), Group(tuple(edge_labels), cls="tv-edge-labels"),
                   Group(tuple(_markers(layout, markers or {})), cls="tv-step-markers")),
                  cls="tv-body", shift_y=legend_h)
    height = layout.height + legend_h if not preview else min(layout.height, width * PREVIEW_ASPECT)
    return Drawing(width=width, height=height, title=title, desc=desc, id_prefix=p, cls="tv-graph",
                   role="group", scoped=True, font_family=FONT_FAMILY,
                   children=(_style(p), Arrowhead(f"{p}-arrow", 7, ARROW_PAINT, cls="tv-arrowhead", styled=True),
                             legend, drawn))
