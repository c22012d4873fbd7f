"""One drawing, two outputs: the shapes of a figure, the SVG writer and the matplotlib (PDF) writer.

Real figures from small real data, written by the real writers; the PDF checks read the
matplotlib artists that are saved, and the saved file itself with ``pdftotext`` where installed.
"""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from sphinx_tensorviz.features.diagram.pdf import diagram_pdf
from sphinx_tensorviz.features.diagram.svg import diagram_drawing
from sphinx_tensorviz.features.graph.layout import layout_graph
from sphinx_tensorviz.features.graph.pdf import graph_pdf
from sphinx_tensorviz.features.graph.svg import draw_node, graph_drawing, graph_to_svg
from sphinx_tensorviz.features.heatmap.pdf import heatmap_pdf
from sphinx_tensorviz.render import mpl_writer, svg_writer
from sphinx_tensorviz.render.bidi import FSI, PDI
from sphinx_tensorviz.render.cell_grid import cell_grid_drawing, cell_grid_svg
from sphinx_tensorviz.render.colors import make_scale
from sphinx_tensorviz.render.shapes import Drawing, Gradient, Group, Paint, Rect, Text
from sphinx_tensorviz.render.shapes import Path as PathShape
from sphinx_tensorviz.render.svg import clean

SVG = "{http://www.w3.org/2000/svg}"
RLO = "\u202e"
HOSTILE = f'<script>alert("x")</script> & {RLO}evil\x00\x07 \ufffe'

DATA: dict[str, Any] = {"values": [[1.0, -2.0, 0.5], [0.0, 3.0, -1.5]], "rows": ["q0", "q_1"],
                        "columns": ["k0", "k$1", "k2"], "unit": "score", "diverging": True}
GRAPH: dict[str, Any] = {
    "layers": [
        {"id": "input", "label": "input", "op": "Input", "kind": "input", "parent": None,
         "outputs": [{"shape": [1, 4], "dtype": "float32"}]},
        {"id": "block", "label": "block", "op": "Module", "kind": "module", "parent": None},
        {"id": "block.lin", "label": "lin", "op": "Linear", "kind": "layer", "parent": "block",
         "outputs": [{"shape": [1, 4], "dtype": "float32"}]},
        {"id": "add@block#0", "label": "add", "op": "torch.add", "kind": "layer", "parent": "block"},
        {"id": "output", "label": "output", "op": "Output", "kind": "output", "parent": None},
    ],
    "connections": [{"id": "1", "source": "input", "target": "block.lin"},
                    {"id": "2", "source": "block.lin", "target": "add@block#0"},
                    {"id": "3", "source": "input", "target": "add@block#0"},
                    {"id": "4", "source": "add@block#0", "target": "output"}],
}
DIAGRAM: dict[str, Any] = {"title": "Residual", "alt": "x to f, added back", "panel": {"width": 4, "height": 4, "nodes": [
    {"id": "x", "x": 2, "y": 0.5, "label": "input x"},
    {"id": "f", "x": 2, "y": 2, "label": "branch f\nsecond line"},
    {"id": "add", "x": 2, "y": 3.5, "label": "x + f(x)", "tone": "result"}],
    "edges": [{"from": "x", "to": "f"}, {"from": "f", "to": "add"},
              {"from": "x", "to": "add", "curve": "arc3,rad=0.4", "label": "skip", "labelAt": [3.2, 2]}]}}


def _walk(shapes: tuple[Any, ...]) -> list[Any]:
    out = []
    for shape in shapes:
        out.append(shape)
        if isinstance(shape, Group):
            out.extend(_walk(shape.children))
    return out


def _texts(fig: Any) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _pdftotext(path: Path) -> str | None:
    if not shutil.which("pdftotext"):
        return None
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


def test_heatmap_shapes_have_one_cell_per_value_in_the_scale_colour_and_a_colour_bar() -> None:
    drawing = cell_grid_drawing(DATA, title="t", alt="a", colormap=None)
    shapes = _walk(drawing.children)
    scale = make_scale(DATA["values"], True, None)
    cells = [s for s in shapes if isinstance(s, Rect) and s.tooltip]
    assert [c.paint.fill for c in cells] == [scale.color(v) for row in DATA["values"] for v in row]
    assert cells[4].tooltip == "q_1, k$1: 3"
    gradient = next(s for s in shapes if isinstance(s, Gradient))
    assert gradient.stops[0] == (0.0, scale.color(3.0)) and gradient.stops[-1] == (1.0, scale.color(-3.0))
    bar = next(s for s in shapes if isinstance(s, Group) and s.cls == "tv-colour-bar")
    assert [t.text for t in bar.children if isinstance(t, Text)] == ["3", "0", "\u22123", "score"]
    assert any(isinstance(s, Rect) and s.paint.fill == f"url(#{gradient.id})" for s in bar.children)


def test_svg_writer_output_parses_and_is_byte_identical_for_the_same_input() -> None:
    first = cell_grid_svg(DATA, title="t", alt="a", colormap=None)
    again = cell_grid_svg({**DATA, "values": [list(r) for r in DATA["values"]]}, title="t", alt="a", colormap=None)
    assert first == again
    root = ET.fromstring(first)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    assert len([r for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]) == 6
    layout = layout_graph(GRAPH)
    assert graph_to_svg(GRAPH, layout, id_prefix="g", title="t", desc="d") == \
        graph_to_svg(GRAPH, layout_graph(GRAPH), id_prefix="g", title="t", desc="d")


def test_svg_writer_escapes_hostile_text_everywhere() -> None:
    drawing = Drawing(width=10, height=10, title=HOSTILE, desc=HOSTILE, id_prefix="p", cls="c", font_family="f",
                      children=(Group((Text(1, 2, HOSTILE, attrs=(("data-x", HOSTILE),)),
                                       Rect(0, 0, 1, 1, Paint(fill="red"), tooltip=HOSTILE)),
                                      cls="g", attrs=(("data-node", HOSTILE),), href=HOSTILE),))
    markup = svg_writer.write(drawing)
    assert "<script" not in markup and "\x00" not in markup and "\x07" not in markup and "\ufffe" not in markup
    root = ET.fromstring(markup)  # raises if anything broke the markup
    expected = f'{FSI}<script>alert("x")</script> & {RLO}evil {PDI}'
    link = root.find(f"{SVG}a")
    assert link is not None and link.get("data-node") == expected and link.get("href") == expected
    assert root.find(f"{SVG}title").text == expected
    assert link.find(f"{SVG}text").text == expected and link.find(f"{SVG}text").get("data-x") == expected
    assert link.find(f"{SVG}rect/{SVG}title").text == expected


def test_cleaning_twice_changes_nothing_and_still_isolates() -> None:
    once = clean(f"a{RLO}b")
    assert once == f"{FSI}a{RLO}b{PDI}" and clean(once) == once
    assert clean(f"tone-{once}") == f"tone-{once}"  # a cleaned part of a composed value stays as it is
    assert clean(f"x{PDI}{RLO}y") == f"{FSI}x{RLO}y{PDI}"  # a stray PDI cannot close the isolate early


def test_heatmap_pdf_shows_cells_labels_title_and_a_colour_bar(tmp_path: Path) -> None:
    drawing = cell_grid_drawing(DATA, title="Scores of $x_1$", alt="", colormap="RdBu_r")
    fig = mpl_writer.figure(drawing, heading=True)
    texts = _texts(fig)
    for label in ("Scores of $x_1$", "q0", "q_1", "k0", "k$1", "k2", "3", "\u22123", "score", "\u22122"):
        assert label in texts, label
    ax = fig.axes[0]
    cells = [p for p in ax.patches if p.get_facecolor()[3] == 1.0 and p.get_width() == 56]
    assert len(cells) == 6
    assert len(ax.images) == 1  # the colour bar's gradient
    assert all(not t.get_usetex() for t in ax.texts)
    path = tmp_path / "heatmap.pdf"
    heatmap_pdf(DATA, path, "Scores of $x_1$", "RdBu_r")
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and b"CreationDate" not in data and b"ModDate" not in data
    again = tmp_path / "again.pdf"
    heatmap_pdf(DATA, again, "Scores of $x_1$", "RdBu_r")
    assert again.read_bytes() == data
    text = _pdftotext(path)
    if text is not None:
        assert "Scores of $x_1$" in text and "q_1" in text and "k$1" in text and "score" in text


def test_heatmap_pdf_uses_the_shared_scale_of_a_sweep(tmp_path: Path) -> None:
    path = tmp_path / "shared.pdf"
    heatmap_pdf({**DATA, "diverging": False}, path, "t", "viridis", limits=(-10.0, 10.0))
    text = _pdftotext(path)
    if text is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    ticks = text.split()
    assert "10" in ticks and "\u221210" in ticks  # the sweep's ends, not this data's (3 and -2)


def test_tour_markers_appear_in_the_svg_and_the_pdf(tmp_path: Path) -> None:
    layout = layout_graph(GRAPH)
    markers = {"input": [(1, "Start <here>")], "output": [(2, "End"), (3, "Again")]}
    root = ET.fromstring(graph_to_svg(GRAPH, layout, id_prefix="g", title="t", desc="d", markers=markers))
    drawn = [(g.get("data-step-number"), g.find(f"{SVG}title").text) for g in root.iter(f"{SVG}g")
             if g.get("class") == "tv-step-marker"]
    assert drawn == [("1", "Step 1: Start <here>"), ("2", "Step 2: End"), ("3", "Step 3: Again")]
    fig = mpl_writer.figure(graph_drawing({}, layout, id_prefix="p", title="", desc="", markers=markers))
    texts = _texts(fig)
    assert {"1", "2", "3", "input", "output", "lin", "Linear"} <= set(texts)
    discs = [p for p in fig.axes[0].patches if type(p).__name__ == "Circle"]
    assert len(discs) == 3
    path, again = tmp_path / "graph.pdf", tmp_path / "again.pdf"
    graph_pdf(layout, path, markers)
    graph_pdf(layout_graph(GRAPH), again, markers)
    assert path.read_bytes() == again.read_bytes()  # reproducible: no dates, nothing random
    text = _pdftotext(path)
    if text is not None:
        assert "input" in text and "Linear" in text and "torch.add" in text and "collapsed module" in text


def test_diagram_pdf_draws_boxes_curves_arrowheads_and_the_edge_label(tmp_path: Path) -> None:
    drawing = diagram_drawing(DIAGRAM, id_prefix="d")
    paths = [s for s in _walk(drawing.children) if isinstance(s, PathShape)]
    assert [p.segments[-1][0] for p in paths] == ["L", "L", "Q"]
    fig = mpl_writer.figure(drawing)
    ax = fig.axes[0]
    assert {"input x", "branch f", "second line", "x + f(x)", "skip"} <= set(_texts(fig))
    arrowheads = [p for p in ax.patches if type(p).__name__ == "Polygon"]
    assert len(arrowheads) == 3
    curved = [p for p in ax.patches if type(p).__name__ == "PathPatch" and 3 in p.get_path().codes]  # CURVE3
    assert len(curved) == 1
    boxes = [p for p in ax.patches if type(p).__name__ == "FancyBboxPatch"]
    assert len(boxes) == 3
    path = tmp_path / "diagram.pdf"
    diagram_pdf(DIAGRAM, path)
    assert path.read_bytes().startswith(b"%PDF")
    text = _pdftotext(path)
    if text is not None:
        assert "input x" in text and "skip" in text


def test_a_node_fragment_is_the_node_of_the_whole_svg() -> None:
    """The page script composes module frames from fragments: they must be the same markup."""
    layout = layout_graph(GRAPH)
    box = next(b for b in layout.boxes if b.id == "block.lin")
    node = next(n for n in GRAPH["layers"] if n["id"] == "block.lin")
    piece = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{draw_node(box, node, "g", None)}</svg>')[0]
    whole = ET.fromstring(graph_to_svg(GRAPH, layout, id_prefix="g", title="t", desc="d"))
    same = next(g for g in whole.iter(f"{SVG}g") if g.get("id") == piece.get("id"))
    assert ET.tostring(piece) == ET.tostring(same)
    assert piece.get("data-node") == "block.lin" and piece.find(f"{SVG}title").text.startswith("Linear: block.lin")


def test_the_page_only_parts_are_left_off_paper() -> None:
    """Links, tooltips and style sheets are for the page: on paper only what they decorate is drawn."""
    drawing = Drawing(width=50, height=20, title="t", desc="d", id_prefix="p", cls="c", font_family="f",
                      children=(Group((Text(2, 10, "linked"),), href="#x", tooltip="tip"),))
    assert _texts(mpl_writer.figure(drawing)) == ["linked"]
