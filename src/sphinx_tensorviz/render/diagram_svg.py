"""Inline SVG for an authored dataflow ``diagram`` (positioned boxes, straight and curved edges).

Why not matplotlib: the authored diagram is a figure of *text* (labels, an edge label), so it
should stay text in the page: selectable, zoomable, read by screen readers and themeable. The
geometry follows the seed artifact exactly, including matplotlib's ``arc3`` connection style, so
an author who previewed the diagram with matplotlib sees the same curves here.

Panel units: ``x`` grows right, ``y`` grows down, node ``x``/``y`` are box centres. One panel
unit is :data:`UNIT` px.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from .svg import attr_value as _attr
from .svg import coord as _f
from .svg import text as _text
from .ids import check_prefix, element_id

__all__ = ["UNIT", "arc3_control", "diagram_to_svg", "edge_geometry"]

UNIT = 60.0
FONT = 14.0
LINE = 1.3
MARGIN = 0.25  # panel units around the drawing
FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"

# Tone: (colour, dash pattern, stroke width). Border style differs per tone so colour is never
# the only cue; unknown tones fall back to a neutral dotted border.
TONES: dict[str, tuple[str, str, str]] = {
    "data": ("#2f7fc1", "", "1.5"),
    "result": ("#c26a00", "", "3"),
    "accent": ("#8e5cc4", "6 3", "2"),
    "muted": ("#6b7785", "2 3", "1.5"),
}
_ARC3 = re.compile(r"^\s*arc3\s*(?:,\s*rad\s*=\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?))?\s*$")

Point = tuple[float, float]


def _side_point(node: Mapping[str, Any], side: str) -> Point:
    """Where an edge leaves or enters a node, in panel units."""
    x, y = float(node["x"]), float(node["y"])
    w, h = float(node.get("w", 1.0)), float(node.get("h", 0.6))
    return {
        "left": (x - w / 2, y),
        "right": (x + w / 2, y),
        "top": (x, y - h / 2),
        "bottom": (x, y + h / 2),
    }.get(side, (x, y))


def arc3_control(p0: Point, p2: Point, rad: float) -> Point:
    """Control point of matplotlib's ``arc3,rad=R`` in y-down coordinates.

    matplotlib computes, in display space (y up), ``c = mid + rad * (dy, -dx)``. With y pointing
    down the y components flip sign, giving ``c = mid + rad * (-dy, dx)``: the control point sits
    ``rad`` chord lengths from the chord's midpoint, perpendicular to it. Going *down* the page,
    a positive ``rad`` therefore bends to the left and a negative one to the right.
    """
    (x0, y0), (x2, y2) = p0, p2
    dx, dy = x2 - x0, y2 - y0
    return ((x0 + x2) / 2 - rad * dy, (y0 + y2) / 2 + rad * dx)


def _parse_rad(curve: Optional[str]) -> Optional[float]:
    if not curve:
        return None
    m = _ARC3.match(str(curve))
    if not m:
        return None  # unknown connection styles fall back to a straight edge
    return float(m.group(1) or 0.0)


def edge_geometry(edge: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> tuple[Point, Optional[Point], Point]:
    """(start, control or None, end) of an edge, in panel units.

    Without sides an edge runs from the bottom centre of its source to the top centre of its
    target (or bottom-to-top reversed when the target sits above).
    """
    a, b = nodes[str(edge["from"])], nodes[str(edge["to"])]
    below = float(b["y"]) >= float(a["y"])
    p0 = _side_point(a, str(edge.get("exit") or ("bottom" if below else "top")))
    p2 = _side_point(b, str(edge.get("enter") or ("top" if below else "bottom")))
    rad = _parse_rad(edge.get("curve"))
    return p0, (arc3_control(p0, p2, rad) if rad else None), p2


def _quad_extrema(p0: Point, c: Point, p2: Point) -> list[Point]:
    """Points where a quadratic Bézier reaches its x or y extremes (for the viewBox)."""
    out = [p0, p2]
    for k in (0, 1):
        den = p0[k] - 2 * c[k] + p2[k]
        if abs(den) > 1e-12:
            t = (p0[k] - c[k]) / den
            if 0 < t < 1:
                out.append(tuple((1 - t) ** 2 * p0[j] + 2 * (1 - t) * t * c[j] + t * t * p2[j] for j in (0, 1)))  # type: ignore[misc]
    return out


def _bounds(nodes: Sequence[Mapping[str, Any]], geoms: Sequence[tuple[Point, Optional[Point], Point]],
            labels: Sequence[tuple[Point, str]], panel: Mapping[str, Any]) -> tuple[float, float, float, float]:
    xs: list[float] = [0.0, float(panel.get("width", 0) or 0)]
    ys: list[float] = [0.0, float(panel.get("height", 0) or 0)]
    for n in nodes:
        x, y, w, h = float(n["x"]), float(n["y"]), float(n.get("w", 1.0)), float(n.get("h", 0.6))
        xs += [x - w / 2, x + w / 2]
        ys += [y - h / 2, y + h / 2]
    for p0, c, p2 in geoms:
        for px, py in (_quad_extrema(p0, c, p2) if c else [p0, p2]):
            xs.append(px)
            ys.append(py)
    for (lx, ly), text in labels:
        half = len(text) * 0.6 * FONT / UNIT / 2 + 0.1
        xs += [lx - half, lx + half]
        ys += [ly - FONT / UNIT, ly + FONT / UNIT]
    return min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN


def _node_svg(node: Mapping[str, Any], p: str, ox: float, oy: float) -> str:
    tone = str(node.get("tone") or "data")
    color, dash, width = TONES.get(tone, ("#6b7785", "1 3", "1.5"))
    x, y = (float(node["x"]) - ox) * UNIT, (float(node["y"]) - oy) * UNIT
    w, h = float(node.get("w", 1.0)) * UNIT, float(node.get("h", 0.6)) * UNIT
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    rect = (f'<rect x="{_f(x - w / 2)}" y="{_f(y - h / 2)}" width="{_f(w)}" height="{_f(h)}" rx="6.0" '
            f'fill="{color}" fill-opacity="0.14" stroke="{color}" stroke-width="{width}"{dash_attr}/>')
    lines = str(node.get("label", "")).split("\n")
    first = y - (len(lines) - 1) * FONT * LINE / 2 + FONT * 0.35
    spans = "".join(
        f'<tspan x="{_f(x)}" y="{_f(first + i * FONT * LINE)}">{_text(line)}</tspan>' for i, line in enumerate(lines)
    )
    return (f'<g id="{element_id(p, "n", str(node.get("id", "")))}" class="tv-dnode tv-tone-{_attr(tone)}" data-node="{_attr(node.get("id", ""))}">'
            f'{rect}<text font-size="{FONT:.0f}" text-anchor="middle">{spans}</text></g>')


def _edge_svg(edge: Mapping[str, Any], geom: tuple[Point, Optional[Point], Point], p: str,
              ox: float, oy: float) -> str:
    (x0, y0), c, (x2, y2) = geom

    def px(pt: Point) -> str:
        return f"{_f((pt[0] - ox) * UNIT)},{_f((pt[1] - oy) * UNIT)}"

    d = f"M{px((x0, y0))}" + (f"Q{px(c)} {px((x2, y2))}" if c else f"L{px((x2, y2))}")
    cls = "tv-dedge tv-curved" if c else "tv-dedge"
    return (f'<path class="{cls}" d="{d}" data-from="{_attr(edge["from"])}" data-to="{_attr(edge["to"])}" '
            f'fill="none" stroke="currentColor" stroke-width="1.6" marker-end="url(#{p}-arrow)"/>')


def diagram_to_svg(diagram: Mapping[str, Any], *, id_prefix: str) -> str:
    """Inline ``role="img"`` SVG of an authored diagram (``title``, ``alt``, ``panel``).

    Deterministic: the same diagram gives the same bytes. ``id_prefix`` must be a valid,
    page-unique id; the title and desc ids are ``{id_prefix}-title`` / ``{id_prefix}-desc``.
    """
    check_prefix(id_prefix)
    p = id_prefix
    panel = diagram.get("panel") or {}
    nodes = list(panel.get("nodes") or ())
    by_id = {str(n["id"]): n for n in nodes}
    edges = [e for e in panel.get("edges") or () if str(e.get("from")) in by_id and str(e.get("to")) in by_id]
    geoms = [edge_geometry(e, by_id) for e in edges]
    labels = [((float(e["labelAt"][0]), float(e["labelAt"][1])) if e.get("labelAt") else _mid(g), str(e["label"]))
              for e, g in zip(edges, geoms) if e.get("label")]
    x0, y0, x1, y1 = _bounds(nodes, geoms, labels, panel)
    width, height = (x1 - x0) * UNIT, (y1 - y0) * UNIT
    title = str(diagram.get("title") or "Diagram")
    desc = str(diagram.get("alt") or diagram.get("reading") or "")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{p}-svg" class="tv-diagram" role="img" '
        f'aria-labelledby="{p}-title {p}-desc" viewBox="0 0 {_f(width)} {_f(height)}" width="100%" '
        f'style="max-width:{_f(width)}px;height:auto" font-family="{_attr(FONT_FAMILY)}">',
        f'<title id="{p}-title">{_text(title)}</title><desc id="{p}-desc">{_text(desc)}</desc>',
        f"<style>#{p}-svg text{{fill:currentColor}}</style>",
        f'<defs><marker id="{p}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        f'markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,1L10,5L0,9z" fill="currentColor"/>'
        f"</marker></defs>",
        '<g class="tv-dedges">' + "".join(_edge_svg(e, g, p, x0, y0) for e, g in zip(edges, geoms)) + "</g>",
        '<g class="tv-dnodes">' + "".join(_node_svg(n, p, x0, y0) for n in nodes) + "</g>",
        '<g class="tv-dlabels">' + "".join(
            f'<text x="{_f((lx - x0) * UNIT)}" y="{_f((ly - y0) * UNIT + FONT * 0.35)}" font-size="{FONT:.0f}" '
            f'font-weight="600" text-anchor="middle">{_text(text)}</text>' for (lx, ly), text in labels) + "</g>",
        "</svg>",
    ]
    return "".join(parts)


def _mid(geom: tuple[Point, Optional[Point], Point]) -> Point:
    """Where a label goes when the author gave no ``labelAt``: the curve's midpoint."""
    p0, c, p2 = geom
    if c is None:
        return ((p0[0] + p2[0]) / 2, (p0[1] + p2[1]) / 2)
    return (0.25 * p0[0] + 0.5 * c[0] + 0.25 * p2[0], 0.25 * p0[1] + 0.5 * c[1] + 0.25 * p2[1])
