"""The drawing model: one description of a figure, written out as SVG and as a PDF.

Why: every figure used to be drawn twice, as hand-written SVG and again with matplotlib, each
with its own colour scale, geometry and tour markers, so the two outputs could drift apart. A
figure function now returns a :class:`Drawing` made of the few primitives below, and two
writers serialise it: :mod:`.svg_writer` for the page and :mod:`.mpl_writer` for LaTeX.

Coordinates are px in SVG user space: ``x`` grows right, ``y`` grows *down*; the PDF writer flips.
What only a page can use (ids, classes, ``data-*`` attributes, tooltips, links, style sheets) is
carried too, and the PDF writer ignores it. Everything is frozen, so a drawing can be cached and
compared, and the same drawing always gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Arrowhead", "Attrs", "Circle", "Drawing", "Gradient", "Group", "Line", "Paint", "Path", "Rect",
           "Segment", "Shape", "Span", "StyleSheet", "Text"]

#: Attributes only a page uses (``data-*``, ``style``), in the order they are written.
Attrs = tuple[tuple[str, str], ...]
Anchor = Literal["start", "middle", "end"]


@dataclass(frozen=True, slots=True)
class Paint:
    """How a shape is filled and outlined. ``None`` leaves an attribute out (SVG's default or the
    enclosing group's applies); colours are ``#rrggbb``, ``none``, ``currentColor`` (the page's
    text colour: black on paper) or ``url(#id)`` (a :class:`Gradient`)."""

    fill: str | None = None
    fill_opacity: float | None = None
    stroke: str | None = None
    stroke_width: float | None = None
    stroke_opacity: float | None = None
    dash: str = ""  # SVG ``stroke-dasharray``, e.g. ``"6 3"``


NO_PAINT = Paint()


@dataclass(frozen=True, slots=True)
class Rect:
    """A box; ``rx`` rounds its corners. ``tooltip`` becomes its ``<title>`` (a cell's value)."""

    x: float
    y: float
    w: float
    h: float
    paint: Paint = NO_PAINT
    rx: float | None = None
    cls: str = ""
    tooltip: str = ""


@dataclass(frozen=True, slots=True)
class Circle:
    """A disc; ``r`` is written compactly like a stroke width (``10``), not as a coordinate."""

    cx: float
    cy: float
    r: float
    paint: Paint = NO_PAINT


@dataclass(frozen=True, slots=True)
class Line:
    """A straight stroke (a tick of a colour bar)."""

    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str = "currentColor"


#: One path command: ``("M", (x, y))``, ``("L", (x, y))``, ``("Q", (cx, cy, x, y))``,
#: ``("C", (c1x, c1y, c2x, c2y, x, y))`` or ``("Z", ())``.
Segment = tuple[str, tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class Path:
    """A curve through ``segments``. ``arrow`` names an :class:`Arrowhead` drawn at its end.

    ``styled``: the paint comes from the figure's :class:`StyleSheet` by class (so a page theme or
    hover can restyle 1,500 edges at once), so the SVG writer leaves it off the element; the PDF
    writer still uses ``paint``.
    """

    segments: tuple[Segment, ...]
    paint: Paint = NO_PAINT
    cls: str = ""
    attrs: Attrs = ()
    arrow: str = ""
    styled: bool = False


@dataclass(frozen=True, slots=True)
class Span:
    """One line of a multi-line :class:`Text`, at its own position."""

    x: float
    y: float
    text: str


@dataclass(frozen=True, slots=True)
class Text:
    """A label at ``(x, y)``: the baseline, or the middle with ``baseline="central"``.

    ``rotate`` (degrees, clockwise as on screen) turns it about its anchor point; ``spans`` are
    the lines of a multi-line label (``x``/``y`` are then unused). ``fill_as_style`` writes the
    colour as a style, which beats a style sheet's ``text{fill:...}`` rule (white on a marker).
    """

    x: float
    y: float
    text: str = ""
    size: float | None = None
    weight: str = ""
    anchor: Anchor | None = None
    baseline: Literal["central"] | None = None
    fill: str | None = None
    fill_as_style: bool = False
    rotate: float | None = None
    cls: str = ""
    attrs: Attrs = ()
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class Gradient:
    """A top-to-bottom linear gradient that a rect's fill names as ``url(#id)``: (offset, colour)."""

    id: str
    stops: tuple[tuple[float, str], ...]


@dataclass(frozen=True, slots=True)
class Arrowhead:
    """The triangle drawn at the end of every path whose ``arrow`` is ``id``, ``size`` px wide,
    its tip just past the path's end. ``styled`` as for :class:`Path`."""

    id: str
    size: float
    paint: Paint = NO_PAINT
    cls: str = ""
    styled: bool = False


@dataclass(frozen=True, slots=True)
class StyleSheet:
    """CSS for the page (focus, hover, theme colours); nothing of it reaches paper."""

    css: str


@dataclass(frozen=True, slots=True)
class Group:
    """Shapes that belong together: one node, one map, the colour bar.

    ``tooltip`` becomes the group's ``<title>``; with ``href`` the group is a link (an ``<a>``).
    ``fill`` is inherited by the texts inside. ``shift_y`` moves the whole group down (the graph
    body below its legend).
    """

    children: tuple[Shape, ...]
    id: str = ""
    cls: str = ""
    attrs: Attrs = ()
    tooltip: str = ""
    href: str = ""
    fill: str | None = None
    shift_y: float | None = None


Shape = Rect | Circle | Line | Path | Text | Gradient | Arrowhead | StyleSheet | Group


@dataclass(frozen=True, slots=True)
class Drawing:
    """A whole figure: its size in px, its accessible name and description, and its shapes.

    ``id_prefix`` starts the ids of the title and description (``{prefix}-title``); ``scoped``
    also gives the root the id ``{prefix}-svg`` that a style sheet's rules hang off. ``responsive``
    figures scale to the column (``width="100%"``); others are drawn at their natural size.
    ``compact`` numbers drop a trailing ``.0`` (``56`` rather than ``56.0``), as heatmaps always
    wrote them, so pages stay byte-comparable with earlier builds.
    """

    width: float
    height: float
    children: tuple[Shape, ...]
    title: str
    desc: str
    id_prefix: str
    cls: str
    font_family: str
    role: str = "img"
    font_size: float | None = None
    scoped: bool = False
    responsive: bool = False
    compact: bool = False
