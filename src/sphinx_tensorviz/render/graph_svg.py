"""Inline, accessible, deterministic SVG for a laid-out model graph, plus its text outline.

Why inline SVG written by hand: nodes must be keyboard-focusable links to the model source, text
must stay text (searchable, zoomable, translatable), and the same input must give the same bytes
so that builds are reproducible and diffs are meaningful.

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
from typing import Any, Optional

from .svg import attr_value as _attr
from .svg import coord as _f
from .svg import text as _text
from .ids import check_prefix, element_id, slugify
from .graph_outline import graph_outline
from .graph_layout import (
    FONT_HEADER,
    FONT_LABEL,
    FONT_SUB,
    LINE_HEIGHT,
    Box,
    GraphLayout,
    shape_text,
    text_width,
)

__all__ = ["draw_cluster", "draw_edge_label", "draw_node", "graph_outline", "graph_to_svg", "node_tone", "slugify"]

FONT_FAMILY = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"

# Okabe-Ito-derived mid tones: readable strokes on white and on dark backgrounds alike.
TONES: dict[str, dict[str, str]] = {
    "io": {"color": "#2f7fc1", "dash": "", "width": "2.2", "name": "input / output"},
    "layer": {"color": "#8e5cc4", "dash": "", "width": "1.4", "name": "layer"},
    "op": {"color": "#c26a00", "dash": "", "width": "1.4", "name": "op"},
    "param": {"color": "#6b7785", "dash": "2 3", "width": "1.6", "name": "parameter"},
    "module": {"color": "#18897a", "dash": "6 3", "width": "1.6", "name": "module (collapsed)"},
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


def _source_attrs(node: Mapping[str, Any]) -> str:
    """``data-source-lines`` (and ``data-source-file`` for another file) for the page script."""
    lines = _source_lines(node)
    if not lines:
        return ""
    key = _source_file(node)
    return f' data-source-lines="{lines}"' + (f' data-source-file="{_attr(key)}"' if key else "")


def node_description(node: Mapping[str, Any], hidden: int = 0) -> str:
    """One-line text for a node's ``<title>``: op, id, params, output shape, source lines."""
    parts = [f"{node.get('op') or node.get('kind')}: {node.get('id')}"]
    params = node.get("params") or {}
    if isinstance(params, Mapping) and params:
        parts.append(", ".join(f"{k}={_fmt_param(v)}" for k, v in params.items()))
    if node.get("kind") == "module":
        parts.append(f"collapsed module, {hidden} op{'s' if hidden != 1 else ''} inside")
    shape = shape_text(node)
    if shape:
        dtype = (node.get("outputs") or [{}])[0].get("dtype")
        parts.append(f"output {shape}" + (f" {dtype}" if dtype else ""))
    lines = _source_lines(node)
    if lines:
        key = _source_file(node)
        parts.append(f"source lines {lines.replace('-', '–')}" + (f" of {key}" if key else ""))
    return "; ".join(parts)


# --------------------------------------------------------------------------------------------
# SVG pieces
# --------------------------------------------------------------------------------------------


def _style(p: str) -> str:
    return (
        f"<style>#{p}-svg text{{fill:currentColor;font-family:{FONT_FAMILY}}}"
        f"#{p}-svg .tv-edge{{fill:none;stroke:currentColor;stroke-opacity:.7;stroke-width:1.3}}"
        f"#{p}-svg .tv-arrowhead{{fill:currentColor;fill-opacity:.8}}"
        f"#{p}-svg a:focus{{outline:none}}"
        f"#{p}-svg a:focus .tv-shape,#{p}-svg a:hover .tv-shape{{stroke-width:3.5;fill-opacity:.3}}"
        f"#{p}-svg a:focus-visible .tv-shape{{stroke:currentColor}}"
        f"#{p}-svg .tv-sub{{fill-opacity:.85}}</style>"
    )


def _shape(tone: str, x: float, y: float, w: float, h: float, cls: str = "tv-shape") -> str:
    t = TONES[tone]
    rx = h / 2 if tone == "io" else (9.0 if tone == "op" else 2.0)
    dash = f' stroke-dasharray="{t["dash"]}"' if t["dash"] else ""
    return (
        f'<rect class="{cls}" x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" rx="{_f(rx)}" '
        f'fill="{t["color"]}" fill-opacity="0.14" stroke="{t["color"]}" stroke-width="{t["width"]}"{dash}/>'
    )


def _module_shape(x: float, y: float, w: float, h: float) -> str:
    """Collapsed module: dashed outer border plus a solid inner border (a 'stack' of ops)."""
    inner = TONES["module"]["color"]
    return _shape("module", x, y, w, h) + (
        f'<rect x="{_f(x + 3)}" y="{_f(y + 3)}" width="{_f(w - 6)}" height="{_f(h - 6)}" rx="1.0" '
        f'fill="none" stroke="{inner}" stroke-width="0.8"/>'
    )


def _labels(box: Box) -> str:
    lines = [(box.label, FONT_LABEL, ' font-weight="600"'), (box.sublabel, FONT_SUB, ' class="tv-sub"')]
    lines = [ln for ln in lines if ln[0]]
    total = sum(size * LINE_HEIGHT for _, size, _ in lines)
    y = box.y + (box.h - total) / 2
    out = []
    for text, size, extra in lines:
        y += size * LINE_HEIGHT
        baseline = y - size * (LINE_HEIGHT - 1) / 2 - size * 0.2
        out.append(f'<text x="{_f(box.cx)}" y="{_f(baseline)}" font-size="{size:.0f}" '
                   f'text-anchor="middle"{extra}>{_text(text)}</text>')
    return "".join(out)


def draw_node(box: Box, node: Mapping[str, Any], p: str,
          source_href: Optional[Callable[[dict], Optional[str]]]) -> str:
    tone = node_tone(node)
    classes = f"tv-node tv-kind-{slugify(box.kind)} tv-tone-{tone}"
    if box.collapsed:
        classes += " tv-module tv-collapsed"
    attrs = f' id="{element_id(p, "n", box.id)}" class="{classes}" data-node="{_attr(box.id)}"'
    attrs += _source_attrs(node)
    if box.collapsed:
        attrs += f' data-hidden-count="{box.hidden_count}"'
    title = f"<title>{_text(node_description(node, box.hidden_count))}</title>"
    shape = _module_shape(box.x, box.y, box.w, box.h) if box.collapsed else _shape(tone, box.x, box.y, box.w, box.h)
    body = shape + _labels(box)
    href = source_href(dict(node)) if source_href else None
    if href:
        return f'<g{attrs}><a href="{_attr(href)}">{title}{body}</a></g>'
    return f"<g{attrs}>{title}{body}</g>"


def draw_cluster(box: Box, node: Mapping[str, Any], p: str,
             source_href: Optional[Callable[[dict], Optional[str]]]) -> str:
    color = TONES["module"]["color"]
    rect = (f'<rect x="{_f(box.x)}" y="{_f(box.y)}" width="{_f(box.w)}" height="{_f(box.h)}" rx="8.0" '
            f'fill="{color}" fill-opacity="0.05" stroke="{color}" stroke-opacity="0.6" stroke-width="1"/>')
    text = "▾ " + box.label
    tw = text_width(text, FONT_HEADER)
    hx, anchor = box.x + 8, "start"
    if box.in_x is not None and hx - 4 <= box.in_x <= hx + tw + 4 and box.x + box.w - 8 - tw > box.in_x + 4:
        hx, anchor = box.x + box.w - 8, "end"  # keep the title clear of the incoming edges
    head = (f'<text x="{_f(hx)}" y="{_f(box.y + 18)}" font-size="{FONT_HEADER:.0f}" '
            f'font-weight="600" text-anchor="{anchor}">{_text(text)}</text>')
    href = source_href(dict(node)) if source_href else None
    if href:
        head = f'<a href="{_attr(href)}">{head}</a>'
    extra = _source_attrs(node)
    return (f'<g id="{element_id(p, "c", box.id)}" class="tv-cluster" data-node="{_attr(box.id)}"{extra}>'
            f"<title>{_text('module ' + box.id)}</title>{rect}{head}</g>")


def _edge_path(points: tuple[tuple[float, float], ...]) -> str:
    """Polyline through the route; non-vertical hops become vertical-tangent cubic curves."""
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{_f(x0)},{_f(y0)}"]
    for x1, y1 in rest:
        if abs(x1 - x0) < 0.05:
            d.append(f"L{_f(x1)},{_f(y1)}")
        else:
            my = (y0 + y1) / 2
            d.append(f"C{_f(x0)},{_f(my)} {_f(x1)},{_f(my)} {_f(x1)},{_f(y1)}")
        x0, y0 = x1, y1
    return "".join(d)


def _edges(layout: GraphLayout, p: str) -> tuple[str, str]:
    """Edge paths, and shape labels under each producer where the box leaves room for them."""
    paths, labels = [], []
    heading: dict[str, list[float]] = {}
    for e in layout.edges:
        if len(e.points) < 2:
            continue
        paths.append(f'<path class="tv-edge" d="{_edge_path(e.points)}" data-source="{_attr(e.source)}" '
                     f'data-target="{_attr(e.target)}" marker-end="url(#{p}-arrow)"/>')
        heading.setdefault(e.source, []).append(e.points[1][0] - e.points[0][0])
    labelled: set[str] = set()
    for e in layout.edges:
        if not e.label or e.source in labelled or len(e.points) < 2:
            continue
        labelled.add(e.source)
        label = draw_edge_label(layout.box(e.source), e, heading[e.source])
        if label:
            labels.append(label)
    return "".join(paths), "".join(labels)


def draw_edge_label(src: Box, e, dxs: list[float]) -> Optional[str]:
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
    return (f'<text class="tv-edge-label" data-source="{_attr(e.source)}" x="{_f(x)}" y="{_f(y0 + 13)}" font-size="{FONT_SUB:.0f}" '
            f'text-anchor="{anchor}">{_text(e.label)}</text>')


def _legend(width: float) -> tuple[str, float]:
    """Legend in words *and* shapes; wraps onto more rows on narrow graphs."""
    items = [(tone, t["name"]) for tone, t in TONES.items()] + [("cluster", "▾ open module")]
    out, x, y = [], 8.0, 8.0
    for tone, name in items:
        label = name if tone != "module" else "▸ n ops: collapsed module"
        item_w = 26 + text_width(label, FONT_SUB) + 18
        if x > 8 and x + item_w > width:
            x, y = 8.0, y + 24
        if tone == "cluster":
            color = TONES["module"]["color"]
            out.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="20.0" height="16.0" rx="4.0" fill="{color}" '
                       f'fill-opacity="0.05" stroke="{color}" stroke-opacity="0.6" stroke-width="1"/>')
        elif tone == "module":
            out.append(_module_shape(x, y, 20, 16))
        else:
            out.append(_shape(tone, x, y, 20, 16, cls="tv-legend-key"))
        out.append(f'<text x="{_f(x + 26)}" y="{_f(y + 12.5)}" font-size="{FONT_SUB:.0f}">{_text(label)}</text>')
        x += item_w
    return f'<g class="tv-legend">{"".join(out)}</g>', y + 16 + 10


def _markers(layout: GraphLayout, markers: Mapping[str, Sequence[tuple[int, str]]]) -> str:
    """Numbered circles on the boxes a guided tour visits: the tour reads on paper, without script.

    ``markers`` maps a visible box id to its (step number, step title) pairs; the circles sit on
    the box's top-right corner, side by side when several steps visit the same box.
    """
    out = []
    for box in layout.boxes:
        circles = []
        for k, (number, step_title) in enumerate(markers.get(box.id, ())):
            cx, cy = box.x + box.w - 4 - 22 * k, box.y + (4 if box.is_cluster else 0)
            circles.append(
                f'<g class="tv-step-marker" data-step-number="{number}"><title>{_text(f"Step {number}: {step_title}")}'
                f'</title><circle cx="{_f(cx)}" cy="{_f(cy)}" r="10" fill="#1f4e79" stroke="#ffffff" '
                f'stroke-width="1.5"/><text x="{_f(cx)}" y="{_f(cy + 4.5)}" font-size="12" font-weight="700" '
                f'text-anchor="middle" style="fill:#ffffff">{number}</text></g>'
            )
        if circles:  # grouped by box, so the page script moves them with it
            out.append(f'<g data-node="{_attr(box.id)}">{"".join(circles)}</g>')
    return "".join(out)


def graph_to_svg(graph: Mapping[str, Any], layout: GraphLayout, *, id_prefix: str, title: str, desc: str,
                 source_href: Optional[Callable[[dict], Optional[str]]] = None,
                 markers: Optional[Mapping[str, Sequence[tuple[int, str]]]] = None) -> str:
    """Inline SVG (no XML declaration) for ``layout`` of ``graph``; byte-identical per input.

    ``id_prefix`` must be a valid, page-unique HTML id (letters, digits, ``-``, ``_``); every
    element id and the scoped ``<style>`` hang off it. ``source_href(node)`` may return a URL
    for a node's source line; such nodes become focusable links. ``markers`` numbers the boxes
    of a guided tour (see :func:`_markers`).
    """
    check_prefix(id_prefix)
    p = id_prefix
    nodes = {str(n.get("id")): n for n in reversed(list(graph.get("layers") or ()))}
    legend, legend_h = _legend(max(layout.width, 360.0))
    width = max(layout.width, 360.0)
    height = layout.height + legend_h
    clusters, body = [], []
    for box in layout.boxes:
        node = nodes.get(box.id, {"id": box.id, "kind": box.kind, "op": box.op})
        if box.is_cluster:
            clusters.append(draw_cluster(box, node, p, source_href))
        else:
            body.append(draw_node(box, node, p, source_href))
    paths, edge_labels = _edges(layout, p)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{p}-svg" class="tv-graph" role="group" '
        f'aria-labelledby="{p}-title {p}-desc" viewBox="0 0 {_f(width)} {_f(height)}" '
        f'width="{_f(width)}" height="{_f(height)}" font-family="{_attr(FONT_FAMILY)}">'
        f'<title id="{p}-title">{_text(title)}</title><desc id="{p}-desc">{_text(desc)}</desc>'
        f"{_style(p)}"
        f'<defs><marker id="{p}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
        f'<path class="tv-arrowhead" d="M0,1L10,5L0,9z"/></marker></defs>'
        f"{legend}"
        f'<g class="tv-body" transform="translate(0 {_f(legend_h)})">'
        f'<g class="tv-clusters">{"".join(clusters)}</g><g class="tv-edges">{paths}</g>'
        f'<g class="tv-nodes">{"".join(body)}</g><g class="tv-edge-labels">{edge_labels}</g>'
        f'<g class="tv-step-markers">{_markers(layout, markers or {})}</g></g></svg>'
    )
