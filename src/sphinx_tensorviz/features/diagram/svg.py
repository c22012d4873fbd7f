"""An authored dataflow ``diagram`` (positioned boxes, straight and curved edges) as shapes.

Why shapes rather than a matplotlib picture: the authored diagram is a figure of *text* (labels,
an edge label), so on the page it should stay text: selectable, zoomable, read by screen readers
and themeable. :func:`diagram_to_svg` writes the shapes as inline SVG and :func:`.pdf.diagram_pdf`
draws the same shapes for LaTeX. The geometry follows the seed artifact exactly, including
matplotlib's ``arc3`` connection style, so an author who previewed the diagram with matplotlib sees
the same curves here.

Panel units: ``x`` grows right, ``y`` grows down, node ``x``/``y`` are box centres. One panel
unit is :data:`UNIT` px.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from ...render.ids import check_prefix, element_id
from ...render.shapes import Arrowhead, Drawing, Group, Paint, Path, Rect, Segment, Span, StyleSheet, Text
from ...render.svg import clean
from ...render.svg_writer import write

__all__ = ["UNIT", "arc3_control", "diagram_drawing", "diagram_to_svg", "edge_geometry"]

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
EDGE_PAINT = Paint(fill="none", stroke="currentColor", stroke_width=1.6)
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


def _node(node: Mapping[str, Any], p: str, ox: float, oy: float) -> Group:
    """A box, its border style by tone, and its label, one span per line."""
    tone = str(node.get("tone") or "data")
    color, dash, width = TONES.get(tone, ("#6b7785", "1 3", "1.5"))
    x, y = (float(node["x"]) - ox) * UNIT, (float(node["y"]) - oy) * UNIT
    w, h = float(node.get("w", 1.0)) * UNIT, float(node.get("h", 0.6)) * UNIT
    rect = Rect(x - w / 2, y - h / 2, w, h, Paint(fill=color, fill_opacity=0.14, stroke=color,
                                                  stroke_width=float(width), dash=dash), rx=6.0)
    lines = str(node.get("label", "")).split("\n")
    first = y - (len(lines) - 1) * FONT * LINE / 2 + FONT * 0.35
    label = Text(x, y, size=FONT, anchor="middle",
                 spans=tuple(Span(x, first + i * FONT * LINE, line) for i, line in enumerate(lines)))
    return Group((rect, label), id=element_id(p, "n", str(node.get("id", ""))), cls=f"tv-dnode tv-tone-{clean(tone)}",
                 attrs=(("data-node", str(node.get("id", ""))),))


def _edge(edge: Mapping[str, Any], geom: tuple[Point, Optional[Point], Point], p: str,
          ox: float, oy: float) -> Path:
    (x0, y0), c, (x2, y2) = geom

    def px(pt: Point) -> tuple[float, float]:
        return ((pt[0] - ox) * UNIT, (pt[1] - oy) * UNIT)

    end: Segment = ("Q", (*px(c), *px((x2, y2)))) if c else ("L", px((x2, y2)))
    return Path((("M", px((x0, y0))), end), EDGE_PAINT, cls="tv-dedge tv-curved" if c else "tv-dedge",
                attrs=(("data-from", str(edge["from"])), ("data-to", str(edge["to"]))), arrow=f"{p}-arrow")


def diagram_to_svg(diagram: Mapping[str, Any], *, id_prefix: str) -> str:
    """Inline ``role="img"`` SVG of an authored diagram (``title``, ``alt``, ``panel``).

    Deterministic: the same diagram gives the same bytes. ``id_prefix`` must be a valid,
    page-unique id; the title and desc ids are ``{id_prefix}-title`` / ``{id_prefix}-desc``.
    """
    return write(diagram_drawing(diagram, id_prefix=id_prefix))


def diagram_drawing(diagram: Mapping[str, Any], *, id_prefix: str) -> Drawing:
    """The diagram as shapes, in px (:data:`UNIT` per panel unit), framed to what it draws."""
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
    return Drawing(
        width=(x1 - x0) * UNIT, height=(y1 - y0) * UNIT, id_prefix=p, cls="tv-diagram", scoped=True,
        responsive=True, font_family=FONT_FAMILY, title=str(diagram.get("title") or "Diagram"),
        desc=str(diagram.get("alt") or diagram.get("reading") or ""),
        children=(
            StyleSheet(f"#{p}-svg text{{fill:currentColor}}"),
            Arrowhead(f"{p}-arrow", 9, Paint(fill="currentColor")),
            Group(tuple(_edge(e, g, p, x0, y0) for e, g in zip(edges, geoms)), cls="tv-dedges"),
            Group(tuple(_node(n, p, x0, y0) for n in nodes), cls="tv-dnodes"),
            Group(tuple(Text((lx - x0) * UNIT, (ly - y0) * UNIT + FONT * 0.35, text, size=FONT, weight="600",
                             anchor="middle") for (lx, ly), text in labels), cls="tv-dlabels"),
        ),
    )


def _mid(geom: tuple[Point, Optional[Point], Point]) -> Point:
    """Where a label goes when the author gave no ``labelAt``: the curve's midpoint."""
    p0, c, p2 = geom
    if c is None:
        return ((p0[0] + p2[0]) / 2, (p0[1] + p2[1]) / 2)
    return (0.25 * p0[0] + 0.5 * c[0] + 0.25 * p2[0], 0.25 * p0[1] + 0.5 * c[1] + 0.25 * p2[1])
