"""Write a :class:`~.shapes.Drawing` (or one shape of it) as SVG markup, with ElementTree.

Why ElementTree and not string concatenation: the serialiser escapes every attribute and text
node the same way, so no drawing function can forget to (lesson text is untrusted). What it
cannot do is drop characters XML cannot carry, or stop a right-to-left override from reordering
the text around it: every string passes through :func:`.svg.clean` first.

Deterministic: attributes are written in the order they are set here, numbers with a fixed
precision (:func:`.svg.coord`, or :func:`.svg.num` for ``compact`` drawings), so the same
drawing gives the same bytes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from .shapes import (
    Arrowhead,
    Circle,
    Drawing,
    Gradient,
    Group,
    Line,
    Paint,
    Path,
    Rect,
    Shape,
    StyleSheet,
    Text,
)
from .svg import clean, coord, num

__all__ = ["css_paint", "fragment", "number", "write"]

SVG_NS = "http://www.w3.org/2000/svg"
#: The arrowhead's outline in its own 10 x 10 box; its point ``(9, 5)`` sits on the path's end.
ARROW_PATH = "M0,1L10,5L0,9z"
Fmt = Callable[[float], str]
#: the smallest rendered text size (px) a figure that scales to its column may shrink to
MIN_TEXT_PX = 12.0


def number(value: float) -> str:
    """Widths, opacities, font sizes and angles: as short as they read (``1.4``, ``12``, ``-45``)."""
    return f"{value:g}"


def css_paint(paint: Paint) -> str:
    """CSS declarations for ``paint`` (``fill:none;stroke-opacity:.7``), for a style-sheet rule
    that paints by class what :class:`~.shapes.Path` ``styled`` leaves off the elements."""
    parts = [("fill", paint.fill), ("fill-opacity", paint.fill_opacity), ("stroke", paint.stroke),
             ("stroke-opacity", paint.stroke_opacity), ("stroke-width", paint.stroke_width)]
    return ";".join(f"{k}:{v if isinstance(v, str) else number(v).removeprefix('0')}"
                    for k, v in parts if v is not None)


def write(drawing: Drawing) -> str:
    """The whole figure: an ``<svg>`` root (no XML declaration) with its title and description."""
    fmt = num if drawing.compact else coord
    p = drawing.id_prefix
    attrs = {"xmlns": SVG_NS}
    if drawing.scoped:
        attrs["id"] = f"{p}-svg"
    attrs.update({"class": drawing.cls, "role": drawing.role, "aria-labelledby": f"{p}-title {p}-desc",
                  "viewBox": f"0 0 {fmt(drawing.width)} {fmt(drawing.height)}"})
    if drawing.responsive:  # down to the width at which its smallest text is 12 px, then it scrolls
        smallest = _smallest_text(drawing.children, drawing.font_size)
        least = drawing.width * min(1.0, MIN_TEXT_PX / smallest) if smallest else drawing.width
        attrs.update({"width": "100%",
                      "style": f"max-width:{fmt(drawing.width)}px;min-width:{fmt(round(least))}px;height:auto"})
    else:
        attrs.update({"width": fmt(drawing.width), "height": fmt(drawing.height)})
    if drawing.font_size is not None:
        attrs["font-size"] = number(drawing.font_size)
    attrs["font-family"] = clean(drawing.font_family)
    root = ET.Element("svg", attrs)
    ET.SubElement(root, "title", {"id": f"{p}-title"}).text = clean(drawing.title)
    ET.SubElement(root, "desc", {"id": f"{p}-desc"}).text = clean(drawing.desc)
    for child in drawing.children:
        _add(root, child, fmt)
    return ET.tostring(root, encoding="unicode")


def _smallest_text(shapes: tuple[Shape, ...], inherited: float | None) -> float | None:
    """The smallest font size of the texts among ``shapes`` (``inherited`` where a text gives none)."""
    sizes = [(shape.size or inherited) if isinstance(shape, Text) else
             _smallest_text(shape.children, inherited) if isinstance(shape, Group) else None for shape in shapes]
    found = [size for size in sizes if size]
    return min(found) if found else None


def fragment(shape: Shape, compact: bool = False) -> str:
    """One shape on its own (a graph node for the page script to place), without an ``<svg>``."""
    holder = ET.Element("g")
    _add(holder, shape, num if compact else coord)
    return ET.tostring(holder[0], encoding="unicode")


def _paint(attrs: dict[str, str], paint: Paint) -> None:
    if paint.fill is not None:
        attrs["fill"] = paint.fill
    if paint.fill_opacity is not None:
        attrs["fill-opacity"] = number(paint.fill_opacity)
    if paint.stroke is not None:
        attrs["stroke"] = paint.stroke
    if paint.stroke_opacity is not None:
        attrs["stroke-opacity"] = number(paint.stroke_opacity)
    if paint.stroke_width is not None:
        attrs["stroke-width"] = number(paint.stroke_width)
    if paint.dash:
        attrs["stroke-dasharray"] = paint.dash


def _extra(attrs: dict[str, str], pairs: tuple[tuple[str, str], ...]) -> None:
    for key, value in pairs:
        attrs[key] = clean(value)


def _add(parent: ET.Element, shape: Shape, fmt: Fmt) -> None:
    _WRITERS[type(shape)](parent, shape, fmt)


def _rect(parent: ET.Element, r: Rect, fmt: Fmt) -> None:
    attrs = {"class": clean(r.cls)} if r.cls else {}
    attrs.update(x=fmt(r.x), y=fmt(r.y), width=fmt(r.w), height=fmt(r.h))
    if r.rx is not None:
        attrs["rx"] = fmt(r.rx)
    _paint(attrs, r.paint)
    element = ET.SubElement(parent, "rect", attrs)
    if r.tooltip:
        ET.SubElement(element, "title").text = clean(r.tooltip)


def _circle(parent: ET.Element, c: Circle, fmt: Fmt) -> None:
    attrs = {"cx": fmt(c.cx), "cy": fmt(c.cy), "r": number(c.r)}
    _paint(attrs, c.paint)
    ET.SubElement(parent, "circle", attrs)


def _line(parent: ET.Element, line: Line, fmt: Fmt) -> None:
    ET.SubElement(parent, "line", {"x1": fmt(line.x1), "x2": fmt(line.x2), "y1": fmt(line.y1),
                                   "y2": fmt(line.y2), "stroke": line.stroke})


def path_data(path: Path, fmt: Fmt) -> str:
    """``M1.0,2.0C1.0,3.0 4.0,3.0 4.0,5.0``: each command's points as ``x,y``, space-separated."""
    out = []
    for op, v in path.segments:  # spelled out per length: a big graph has thousands of edges
        if op == "Z":
            out.append("z")
        elif len(v) == 2:
            out.append(f"{op}{fmt(v[0])},{fmt(v[1])}")
        elif len(v) == 4:
            out.append(f"{op}{fmt(v[0])},{fmt(v[1])} {fmt(v[2])},{fmt(v[3])}")
        else:
            out.append(f"{op}{fmt(v[0])},{fmt(v[1])} {fmt(v[2])},{fmt(v[3])} {fmt(v[4])},{fmt(v[5])}")
    return "".join(out)


def _path(parent: ET.Element, path: Path, fmt: Fmt) -> None:
    attrs = {"class": clean(path.cls)} if path.cls else {}
    attrs["d"] = path_data(path, fmt)
    _extra(attrs, path.attrs)
    if not path.styled:
        _paint(attrs, path.paint)
    if path.arrow:
        attrs["marker-end"] = f"url(#{path.arrow})"
    ET.SubElement(parent, "path", attrs)


def _text(parent: ET.Element, t: Text, fmt: Fmt) -> None:
    attrs = {"class": clean(t.cls)} if t.cls else {}
    _extra(attrs, t.attrs)
    if t.rotate is not None:
        attrs["transform"] = f"translate({fmt(t.x)},{fmt(t.y)}) rotate({number(t.rotate)})"
    elif not t.spans:
        attrs.update(x=fmt(t.x), y=fmt(t.y))
    if t.size is not None:
        attrs["font-size"] = number(t.size)
    if t.weight:
        attrs["font-weight"] = t.weight
    if t.anchor:
        attrs["text-anchor"] = t.anchor
    if t.baseline:
        attrs["dominant-baseline"] = t.baseline
    if t.fill is not None:
        attrs["style" if t.fill_as_style else "fill"] = f"fill:{t.fill}" if t.fill_as_style else t.fill
    element = ET.SubElement(parent, "text", attrs)
    if t.text:
        element.text = clean(t.text)
    for span in t.spans:
        ET.SubElement(element, "tspan", {"x": fmt(span.x), "y": fmt(span.y)}).text = clean(span.text)


def _gradient(parent: ET.Element, g: Gradient, fmt: Fmt) -> None:
    defs = ET.SubElement(parent, "defs")
    element = ET.SubElement(defs, "linearGradient", {"id": clean(g.id), "x1": "0", "y1": "0", "x2": "0", "y2": "1"})
    for offset, color in g.stops:
        ET.SubElement(element, "stop", {"offset": coord(offset), "stop-color": color})


def _arrowhead(parent: ET.Element, a: Arrowhead, fmt: Fmt) -> None:
    defs = ET.SubElement(parent, "defs")
    size = number(a.size)
    marker = ET.SubElement(defs, "marker", {
        "id": clean(a.id), "viewBox": "0 0 10 10", "refX": "9", "refY": "5", "markerWidth": size,
        "markerHeight": size, "markerUnits": "userSpaceOnUse", "orient": "auto-start-reverse"})
    attrs = {"class": clean(a.cls)} if a.cls else {}
    attrs["d"] = ARROW_PATH
    if not a.styled:
        _paint(attrs, a.paint)
    ET.SubElement(marker, "path", attrs)


def _style(parent: ET.Element, s: StyleSheet, fmt: Fmt) -> None:
    ET.SubElement(parent, "style").text = clean(s.css)


def _group(parent: ET.Element, g: Group, fmt: Fmt) -> None:
    attrs = {"href": clean(g.href)} if g.href else {}
    if g.id:
        attrs["id"] = clean(g.id)
    if g.cls:
        attrs["class"] = clean(g.cls)
    _extra(attrs, g.attrs)
    if g.fill is not None:
        attrs["fill"] = g.fill
    if g.shift_y is not None:
        attrs["transform"] = f"translate(0 {fmt(g.shift_y)})"
    element = ET.SubElement(parent, "a" if g.href else "g", attrs)
    if g.tooltip:
        ET.SubElement(element, "title").text = clean(g.tooltip)
    for child in g.children:
        _WRITERS[type(child)](element, child, fmt)


_WRITERS: dict[type, Callable[[ET.Element, object, Fmt], None]] = {  # type: ignore[dict-item]
    Rect: _rect, Circle: _circle, Line: _line, Path: _path, Text: _text, Gradient: _gradient,
    Arrowhead: _arrowhead, StyleSheet: _style, Group: _group,
}
