"""Draw a :class:`~.shapes.Drawing` into a PDF with matplotlib, for the LaTeX builder.

Why the same shapes as the page: the PDF used to be a second picture (imshow, a colour bar of its
own, markers placed again), so the printed figure could disagree with the page. Here every shape
is drawn where the SVG puts it: 1 px of the drawing is 1/96 inch, the axes span the whole figure
with y pointing down (as in SVG), and shapes are stacked in the order they come.

What only a page can use (links, tooltips, ids, ``data-*``, style sheets) is skipped. Text is
plain text: no TeX, no mathtext (``$`` in a label stays a dollar sign). matplotlib is imported
only when a PDF is drawn, and the file carries no time stamps, so the same drawing gives the same
bytes.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from pathlib import Path as FilePath
from typing import Any

from .bidi import without_controls
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
from .svg import printable

__all__ = ["PDF_ID_PREFIX", "PT_PER_PX", "figure", "save_pdf"]

#: Paper has no page ids; the drawings still want a valid prefix.
PDF_ID_PREFIX = "tvpdf"

#: CSS px are 1/96 inch, points 1/72 inch.
PT_PER_PX = 72 / 96
DEFAULT_FONT = 16.0  # SVG's initial font size, in px
HEADING = 28.0  # px above the drawing for its title (``heading``)
ANCHORS = {"start": "left", "middle": "center", "end": "right"}


def save_pdf(drawing: Drawing, path: FilePath, *, heading: bool = False) -> None:
    """Draw ``drawing`` and write it to ``path`` as a one-page PDF without time stamps."""
    figure(drawing, heading=heading).savefig(path, format="pdf", metadata={"CreationDate": None, "ModDate": None})


def figure(drawing: Drawing, *, heading: bool = False) -> Any:
    """``drawing`` as a matplotlib ``Figure`` (not attached to pyplot, so nothing to close).

    ``heading`` prints the drawing's title above it: a page shows the title as the figure's
    accessible name and caption, which paper does not have."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    top = HEADING if heading else 0.0
    fig = Figure(figsize=(drawing.width / 96, (drawing.height + top) / 96))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, drawing.width)
    ax.set_ylim(drawing.height + top, 0)
    ax.axis("off")
    painter = _Painter(ax, drawing)
    if heading:
        painter.draw((Text(drawing.width / 2, top * 0.7, drawing.title, size=15, weight="600", anchor="middle"),),
                     0.0, None)
    painter.draw(drawing.children, top, None)
    return fig


def _color(value: str | None, alpha: float | None = None) -> Any:
    """An SVG colour as matplotlib's: ``currentColor`` is the text colour, black on paper."""
    from matplotlib.colors import to_rgba

    if value is None or value == "none":
        return "none"
    return to_rgba("black" if value == "currentColor" else value, 1.0 if alpha is None else alpha)


def _defs(shapes: tuple[Shape, ...], found: dict[str, Shape]) -> dict[str, Shape]:
    """Gradients and arrowheads by id, wherever they stand: shapes refer to them by ``url(#id)``."""
    for shape in shapes:
        if isinstance(shape, (Gradient, Arrowhead)):
            found[shape.id] = shape
        elif isinstance(shape, Group):
            _defs(shape.children, found)
    return found


class _Painter:
    """Adds one artist per shape to ``ax``, each above the ones before (SVG's painter's order)."""

    def __init__(self, ax: Any, drawing: Drawing) -> None:
        self.ax = ax
        self.defs = _defs(drawing.children, {})
        self.font_size = drawing.font_size or DEFAULT_FONT
        self.family = "DejaVu Sans Mono" if "monospace" in drawing.font_family else "DejaVu Sans"
        self.z = 0

    def _next_z(self) -> int:
        self.z += 1
        return self.z

    def draw(self, shapes: tuple[Shape, ...], dy: float, fill: str | None) -> None:
        """``dy``: how far enclosing groups moved their shapes down; ``fill``: the inherited fill."""
        for shape in shapes:
            if isinstance(shape, Group):
                self.draw(shape.children, dy + (shape.shift_y or 0.0), shape.fill or fill)
            elif isinstance(shape, Rect):
                self._rect(shape, dy, fill)
            elif isinstance(shape, Circle):
                from matplotlib.patches import Circle as Disc

                self.ax.add_patch(Disc((shape.cx, shape.cy + dy), shape.r, **self._patch_style(shape.paint, fill)))
            elif isinstance(shape, Line):
                self.ax.plot([shape.x1, shape.x2], [shape.y1 + dy, shape.y2 + dy], color=_color(shape.stroke),
                             linewidth=PT_PER_PX, solid_capstyle="butt", zorder=self._next_z())
            elif isinstance(shape, Path):
                self._path(shape, dy)
            elif isinstance(shape, Text):
                self._text(shape, dy, fill)
            else:  # Gradient, Arrowhead (used by reference), StyleSheet (the page's only)
                assert isinstance(shape, (Gradient, Arrowhead, StyleSheet)), shape

    def _patch_style(self, paint: Paint, fill: str | None) -> dict[str, Any]:
        """Face, edge, width and dashes of a patch; SVG's defaults: filled black, no outline."""
        face = paint.fill if paint.fill is not None else (fill or "black")
        width = (1.0 if paint.stroke_width is None else paint.stroke_width) * PT_PER_PX
        style: dict[str, Any] = {
            "facecolor": _color(face, paint.fill_opacity), "edgecolor": _color(paint.stroke, paint.stroke_opacity),
            "linewidth": width if paint.stroke not in (None, "none") else 0.0, "zorder": self._next_z(),
        }
        if paint.dash and width:  # matplotlib scales dash lengths by the line width
            style["linestyle"] = (0, tuple(float(v) * PT_PER_PX / width for v in paint.dash.split()))
        return style

    def _rect(self, r: Rect, dy: float, fill: str | None) -> None:
        from matplotlib.patches import FancyBboxPatch, Rectangle

        y = r.y + dy
        paint = r.paint
        gradient = self.defs.get((paint.fill or "")[5:-1]) if (paint.fill or "").startswith("url(#") else None
        if isinstance(gradient, Gradient):
            self._gradient(gradient, r.x, y, r.w, r.h)
            paint = replace(paint, fill="none", fill_opacity=None)  # the image is the fill
        style = self._patch_style(paint, fill)
        if r.rx:
            rounding = min(r.rx, r.w / 2, r.h / 2)
            patch = FancyBboxPatch((r.x, y), r.w, r.h, boxstyle=f"round,pad=0,rounding_size={rounding}", **style)
        else:
            patch = Rectangle((r.x, y), r.w, r.h, **style)
        self.ax.add_patch(patch)

    def _gradient(self, g: Gradient, x: float, y: float, w: float, h: float) -> None:
        """The gradient as an image of 256 rows, interpolated between its stops as SVG does."""
        from matplotlib.colors import to_rgb

        stops = [(offset, to_rgb(color)) for offset, color in g.stops]
        rows = []
        for k in range(256):
            t = k / 255
            (o0, c0), (o1, c1) = next(((a, b) for a, b in itertools.pairwise(stops) if t <= b[0]), (stops[-2], stops[-1]))
            f = 0.0 if o1 == o0 else min(1.0, max(0.0, (t - o0) / (o1 - o0)))
            rows.append([tuple(a + (b - a) * f for a, b in zip(c0, c1))])
        self.ax.imshow(rows, extent=(x, x + w, y + h, y), aspect="auto", interpolation="nearest",
                       zorder=self._next_z())

    def _path(self, p: Path, dy: float) -> None:
        from matplotlib.patches import PathPatch, Polygon
        from matplotlib.path import Path as CurvePath

        codes = {"M": [CurvePath.MOVETO], "L": [CurvePath.LINETO], "Q": [CurvePath.CURVE3] * 2,
                 "C": [CurvePath.CURVE4] * 3, "Z": [CurvePath.CLOSEPOLY]}
        vertices: list[tuple[float, float]] = []
        kinds: list[int] = []
        for op, values in p.segments:
            points = [(values[k], values[k + 1] + dy) for k in range(0, len(values), 2)] or [vertices[-1]]
            vertices.extend(points)
            kinds.extend(codes[op])
        self.ax.add_patch(PathPatch(CurvePath(vertices, kinds), **self._patch_style(p.paint, None)))
        head = self.defs.get(p.arrow)
        if isinstance(head, Arrowhead) and len(vertices) > 1:
            (x0, y0), (x1, y1) = vertices[-2], vertices[-1]
            angle = math.atan2(y1 - y0, x1 - x0)
            cos, sin, scale = math.cos(angle), math.sin(angle), head.size / 10
            outline = [((u - 9) * scale, (v - 5) * scale) for u, v in ((0, 1), (10, 5), (0, 9))]
            corners = [(x1 + a * cos - b * sin, y1 + a * sin + b * cos) for a, b in outline]
            self.ax.add_patch(Polygon(corners, closed=True, **self._patch_style(head.paint, None)))

    def _text(self, t: Text, dy: float, fill: str | None) -> None:
        style: dict[str, Any] = {
            "fontsize": (t.size or self.font_size) * PT_PER_PX, "family": self.family,
            "ha": ANCHORS.get(t.anchor or "start", "left"), "va": "center" if t.baseline == "central" else "baseline",
            "color": _color(t.fill or fill or "currentColor"), "zorder": self._next_z(),
            "parse_math": False, "usetex": False,
        }
        if t.weight:  # DejaVu has two weights: 600 and up is bold
            style["fontweight"] = "bold" if not t.weight.isdigit() or int(t.weight) >= 600 else "normal"
        if t.rotate is not None:  # SVG turns clockwise on screen, matplotlib counter-clockwise
            style.update(rotation=-t.rotate, rotation_mode="anchor")
        for x, y, text in ([(s.x, s.y, s.text) for s in t.spans] or [(t.x, t.y, t.text)]):
            self.ax.text(x, y + dy, without_controls(printable(text)), **style)
