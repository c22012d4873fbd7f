"""Graph layout, graph SVG, outline and authored-diagram SVG, checked on the seed documents."""

from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

from sphinx_tensorviz.features.diagram.svg import arc3_control, diagram_to_svg, edge_geometry
from sphinx_tensorviz.features.graph.frames import frame_files
from sphinx_tensorviz.features.graph.layout import build_view, layout_graph, module_frames
from sphinx_tensorviz.features.graph.page import GraphOnPage
from sphinx_tensorviz.features.graph.svg import graph_outline, graph_to_svg
from sphinx_tensorviz.render.ids import element_id, id_token

SEEDS = ROOT / "tests" / "seeds"  # copies of ../shared/seeds, the documents our schema starts from
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def graph() -> dict:
    page = json.loads((SEEDS / "llama-decoder-model-page.json").read_text(encoding="utf-8"))
    return {"layers": page["layers"], "connections": page["connections"]}


@pytest.fixture(scope="module")
def diagram() -> dict:
    return json.loads((SEEDS / "executed-heatmap-artifact.json").read_text(encoding="utf-8"))["diagram"]


def _svg(graph: dict, **kw) -> str:
    layout = layout_graph(graph, **kw)
    return graph_to_svg(graph, layout, id_prefix="tv-g", title="TinyLlama", desc="One forward pass.",
                        source_href=lambda n: f"#L{n['source']['line']}" if n.get("source") else None)


def _drawable_ids(graph: dict) -> list[str]:
    return [n["id"] for n in graph["layers"] if n["kind"] != "module"]


# ---------------------------------------------------------------------------------------- layout


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_svg_is_deterministic_and_well_formed(graph: dict, depth: int) -> None:
    first = _svg(graph, depth=depth)
    second = _svg(copy.deepcopy(graph), depth=depth)
    assert first == second
    root = ET.fromstring(first)
    assert root.tag == f"{SVG}svg"
    assert not first.startswith("<?xml")


def test_every_visible_drawable_node_has_a_titled_group(graph: dict) -> None:
    layout = layout_graph(graph, depth=99)
    root = ET.fromstring(_svg(graph, depth=99))
    groups = {g.get("data-node"): g for g in root.iter(f"{SVG}g") if "tv-node" in (g.get("class") or "")}
    for node_id in _drawable_ids(graph):
        assert node_id in layout
        g = groups[node_id]
        titles = [t.text for t in g.iter(f"{SVG}title")]
        assert titles and node_id in titles[0]
        assert g.get("id", "").startswith("tv-g-n-")
    ids = [el.get("id") for el in root.iter() if el.get("id")]
    assert len(ids) == len(set(ids)), "element ids must be unique"
    up = groups["block.ffn.up"]
    assert up.get("data-source-lines") == "58-58"
    link = up.find(f"{SVG}a")
    assert link is not None and link.get("href") == "#L58"


def test_depth_one_collapses_children_and_reroutes_edges(graph: dict) -> None:
    layout = layout_graph(graph, depth=1)
    view = build_view(graph, depth=1)
    assert layout.box("block").is_cluster and not layout.box("block").collapsed
    attention = layout.box("block.attention")
    assert attention.collapsed and attention.hidden_count == 32
    for hidden in ("block.attention.query", "mul@block.attention.query_rope#0", "block.ffn.up"):
        assert hidden not in layout
        assert view.rep[hidden] in ("block.attention", "block.ffn")
    pairs = {(e.source, e.target) for e in layout.edges}
    assert ("block.attention_norm", "block.attention") in pairs  # via mul@attention_norm -> query
    assert ("block.attention", "add@block#0") in pairs  # via project -> add
    assert ("block.ffn", "add@block#1") in pairs
    assert all(s != t for s, t in pairs)
    assert len(pairs) == len(layout.edges), "re-routed edges are deduplicated"
    root = ET.fromstring(_svg(graph, depth=1))
    collapsed = [g for g in root.iter(f"{SVG}g") if "tv-collapsed" in (g.get("class") or "")]
    assert {g.get("data-node") for g in collapsed} == {"block.attention_norm", "block.attention",
                                                        "block.ffn_norm", "block.ffn"}
    texts = ["".join(t.itertext()) for g in collapsed for t in g.iter(f"{SVG}text")]
    assert "▸ 32 ops" in texts  # a text marker, not colour alone


def test_depth_zero_collapses_top_level_modules(graph: dict) -> None:
    layout = layout_graph(graph, depth=0)
    assert {b.id for b in layout.boxes} == {"input", "embedding", "block", "final_norm", "lm_head", "output"}
    assert {(e.source, e.target) for e in layout.edges} == {
        ("input", "embedding"), ("embedding", "block"), ("block", "final_norm"),
        ("final_norm", "lm_head"), ("lm_head", "output")}


def test_expand_opens_a_module_and_its_ancestors(graph: dict) -> None:
    layout = layout_graph(graph, depth=0, expand=["block.ffn"])
    assert layout.box("block").is_cluster and layout.box("block.ffn").is_cluster
    assert layout.box("block.attention").collapsed
    assert layout.box("block.ffn.up").parent == "block.ffn"
    assert layout.box("final_norm").collapsed


def test_edge_endpoints_exist_and_touch_their_boxes(graph: dict) -> None:
    for depth in (0, 1, 2, 3):
        layout = layout_graph(graph, depth=depth)
        for e in layout.edges:
            src, dst = layout.box(e.source), layout.box(e.target)
            assert not src.is_cluster and not dst.is_cluster
            (x0, y0), (x1, y1) = e.points[0], e.points[-1]
            assert src.x - 0.5 <= x0 <= src.x + src.w + 0.5 and abs(y0 - (src.y + src.h)) < 0.6
            assert dst.x - 0.5 <= x1 <= dst.x + dst.w + 0.5 and abs(y1 - dst.y) < 0.6
            for px, py in e.points:
                assert 0 <= px <= layout.width and 0 <= py <= layout.height
        root = ET.fromstring(_svg(graph, depth=depth))
        drawn = {g.get("data-node") for g in root.iter(f"{SVG}g") if g.get("data-node")}
        for path in root.iter(f"{SVG}path"):
            if "tv-edge" in (path.get("class") or ""):
                assert path.get("data-source") in drawn and path.get("data-target") in drawn


def _overlap(a, b) -> bool:
    return a.x < b.x + b.w - 0.05 and b.x < a.x + a.w - 0.05 and a.y < b.y + b.h - 0.05 and b.y < a.y + a.h - 0.05


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_no_overlapping_siblings_and_children_inside_clusters(graph: dict, depth: int) -> None:
    layout = layout_graph(graph, depth=depth)
    siblings: dict = {}
    for b in layout.boxes:
        siblings.setdefault(b.parent, []).append(b)
        if b.parent is not None:
            p = layout.box(b.parent)
            assert p.is_cluster
            assert p.x <= b.x and b.x + b.w <= p.x + p.w and p.y < b.y and b.y + b.h <= p.y + p.h
    for group in siblings.values():
        group.sort(key=lambda b: (b.rank, b.x))
        for a, b in zip(group, group[1:]):
            if a.rank == b.rank:
                assert a.x + a.w <= b.x, (a.id, b.id)
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                assert not _overlap(a, b), (a.id, b.id)


def test_flow_is_top_to_bottom(graph: dict) -> None:
    layout = layout_graph(graph, depth=0)
    ys = [layout.box(n).y for n in ("input", "embedding", "block", "final_norm", "lm_head", "output")]
    assert ys == sorted(ys)


def test_text_is_escaped(graph: dict) -> None:
    evil = copy.deepcopy(graph)
    evil["layers"].append({"id": 'x<script>alert("1")</script>&\'', "label": '<script>"q" & \'s\'', "op": "Evil<op>",
                           "kind": "layer", "parent": None, "params": {"k": '"<v>"'}})
    evil["connections"].append({"id": "edge-x", "source": "lm_head", "target": evil["layers"][-1]["id"]})
    text = graph_to_svg(evil, layout_graph(evil, depth=1), id_prefix="tv-e", title='T <b>"x"</b>', desc="a & b")
    root = ET.fromstring(text)  # would raise if anything broke the markup
    assert "<script" not in text
    assert "&lt;script&gt;" in text
    node = next(g for g in root.iter(f"{SVG}g") if (g.get("data-node") or "").startswith("x<script>"))
    assert node.get("data-node") == 'x<script>alert("1")</script>&\''
    assert root.find(f"{SVG}title").text == 'T <b>"x"</b>'


def test_root_accessibility_attributes(graph: dict) -> None:
    root = ET.fromstring(_svg(graph))
    assert root.get("role") == "group"
    assert root.get("aria-labelledby") == "tv-g-title tv-g-desc"
    assert root.find(f"{SVG}title").get("id") == "tv-g-title"
    assert root.find(f"{SVG}desc").get("id") == "tv-g-desc"
    # drawn at its natural size (1 user unit = 1 CSS px): text never shrinks below its font size
    _, _, vb_w, vb_h = root.get("viewBox", "").split()
    assert (root.get("width"), root.get("height")) == (vb_w, vb_h)
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "tv-legend")
    words = " ".join("".join(t.itertext()) for t in legend.iter(f"{SVG}text"))
    for word in ("input / output", "layer", "op", "parameter", "collapsed module", "open module"):
        assert word in words
    sizes = [float(t.get("font-size")) for t in root.iter(f"{SVG}text") if t.get("font-size")]
    assert sizes and min(sizes) >= 12


def test_bad_id_prefix_is_rejected(graph: dict) -> None:
    with pytest.raises(ValueError):
        graph_to_svg(graph, layout_graph(graph), id_prefix='a" onload="x', title="t", desc="d")


def test_cycles_and_junk_do_not_hang() -> None:
    g = {"layers": [{"id": i, "label": i, "op": "Linear", "kind": "layer", "parent": p}
                    for i, p in [("a", None), ("b", None), ("c", "m"), ("m", None)]],
         "connections": [{"id": "1", "source": "a", "target": "b"}, {"id": "2", "source": "b", "target": "a"},
                         {"id": "3", "source": "b", "target": "b"}, {"id": "4", "source": "b", "target": "zz"}]}
    g["layers"][3]["kind"] = "module"
    layout = layout_graph(g)
    assert {(e.source, e.target) for e in layout.edges} == {("a", "b"), ("b", "a")}
    ET.fromstring(graph_to_svg(g, layout, id_prefix="c", title="t", desc="d"))


def test_shape_labels_come_from_the_producer() -> None:
    g = {"layers": [{"id": "x", "label": "x", "op": "Input", "kind": "input", "parent": None,
                     "outputs": [{"shape": [1, 6, 16], "dtype": "float32"}]},
                    {"id": "lin", "label": "lin", "op": "Linear", "kind": "layer", "parent": None}],
         "connections": [{"id": "e", "source": "x", "target": "lin"}]}
    layout = layout_graph(g)
    assert layout.edges[0].label == "1×6×16"
    assert "1×6×16" in graph_to_svg(g, layout, id_prefix="s", title="t", desc="d")


def test_a_5000_node_graph_lays_out_completely() -> None:
    layers, conns = [], []
    prev = "input"
    layers.append({"id": "input", "label": "input", "op": "Input", "kind": "input", "parent": None})
    for b in range(100):
        mod = f"blocks.{b}"
        layers.append({"id": mod, "label": mod, "op": "Module", "kind": "module", "parent": None})
        resid = prev
        for k in range(50):
            nid = f"{mod}.op{k}"
            layers.append({"id": nid, "label": nid, "op": "Linear", "kind": "layer", "parent": mod})
            conns.append({"id": f"e{len(conns)}", "source": prev, "target": nid})
            if k % 7 == 6:
                conns.append({"id": f"e{len(conns)}", "source": resid, "target": nid})
                resid = nid
            prev = nid
    g = {"layers": layers, "connections": conns}
    layout = layout_graph(g, depth=1)  # its time is measured in bench/bench_graph_layout.py, not here
    assert len(layout.boxes) == 5101


# --------------------------------------------------------------------------------------- outline


def test_outline_nesting_matches_parents(graph: dict) -> None:
    view = build_view(graph, depth=2)
    items = graph_outline(graph, depth=2)

    def walk(items, parent):
        for item in items:
            assert view.parent[item.id] == parent
            if item.children:
                assert view.is_cluster(item.id)
                walk(item.children, item.id)

    walk(items, None)
    top = [i.id for i in items]
    assert top[:2] == ["input", "embedding"] and top[-2:] == ["lm_head", "output"]
    block = next(i for i in items if i.id == "block")
    attention = next(i for i in block.children if i.id == "block.attention")
    rope = next(i for i in attention.children if i.id == "block.attention.query_rope")
    assert rope.children == () and "12 ops" in rope.text
    softmax = next(i for i in attention.children if i.id == "block.attention.softmax")
    assert "inputs: div@block.attention#0, python@block.attention#1" in softmax.text


def test_outline_shares_the_figure_layout_and_names_real_ids(graph: dict) -> None:
    layout = layout_graph(graph, depth=2)
    assert graph_outline(graph, depth=2, layout=layout) == graph_outline(graph, depth=2)
    items = graph_outline(graph, depth=2, layout=layout)
    block = next(i for i in items if i.id == "block")
    attention = next(i for i in block.children if i.id == "block.attention")
    softmax = next(i for i in attention.children if i.id == "block.attention.softmax")
    # an op drawn as "div #0" says the id a tour's :target: takes
    div = next(i for i in attention.children if i.id == "div@block.attention#0")
    assert div.text.startswith("div #0") and "id div@block.attention#0" in div.text
    assert "id block.attention.softmax" in softmax.text  # drawn as "softmax" inside its module
    lm_head = next(i for i in items if i.id == "lm_head")
    assert ", id " not in lm_head.text  # drawn under its own id: nothing to add


# ------------------------------------------------------------------------------------ element ids


def _colliding() -> dict:
    """Two nodes whose old slugs collided (``a.b`` and ``a-b`` both gave ``a-b``), and one with ``@#``."""
    return {"layers": [
        {"id": "x", "label": "x", "op": "Input", "kind": "input", "parent": None},
        {"id": "a.b", "label": "a.b", "op": "Linear", "kind": "layer", "parent": None},
        {"id": "a-b", "label": "a-b", "op": "Linear", "kind": "layer", "parent": None},
        {"id": "mul@root#0", "label": "mul@root#0", "op": "torch.mul", "kind": "layer", "parent": None},
    ], "connections": [{"id": "e1", "source": "x", "target": "a.b"}, {"id": "e2", "source": "a.b", "target": "a-b"},
                       {"id": "e3", "source": "a-b", "target": "mul@root#0"}]}


def test_element_ids_are_one_function_without_collisions() -> None:
    g = _colliding()
    ids = [n["id"] for n in g["layers"]]
    assert len({id_token(i) for i in ids}) == len(ids)
    assert id_token("a_b") != id_token("a__b") != id_token("a@b")
    root = ET.fromstring(graph_to_svg(g, layout_graph(g), id_prefix="fig", title="t", desc="d"))
    by_node = {el.get("data-node"): el.get("id") for el in root.iter(f"{SVG}g") if el.get("data-node")}
    assert by_node["a-b"] != by_node["a.b"]
    tour = GraphOnPage("fig", {"data": g}, 2, ())
    for node_id in ids:
        # the tour's link points at the element drawn for that very node
        assert tour.anchor(node_id) == (node_id, by_node[node_id]) == (node_id, element_id("fig", "n", node_id))
    panel = {"title": "d", "panel": {"nodes": [{"id": "a.b", "label": "1", "x": 1, "y": 1},
                                               {"id": "a-b", "label": "2", "x": 3, "y": 1}], "edges": []}}
    drawn = {el.get("data-node"): el.get("id") for el in ET.fromstring(diagram_to_svg(panel, id_prefix="d")).iter(f"{SVG}g")
             if el.get("data-node")}
    assert drawn == {"a.b": element_id("d", "n", "a.b"), "a-b": element_id("d", "n", "a-b")}


def test_target_takes_an_id_or_a_unique_drawn_label(graph: dict) -> None:
    tour = GraphOnPage("fig", {"data": graph}, 2, ())
    assert tour.resolve("block.attention.softmax") == "block.attention.softmax"
    assert tour.resolve("div@block.attention#0") == "div@block.attention#0"
    labels = tour.drawn_labels
    unique = next(label for label, ids in labels.items() if len(ids) == 1 and label != ids[0])
    assert tour.resolve(unique) == labels[unique][0]
    shared = next(label for label, ids in labels.items() if len(ids) > 1)
    assert tour.resolve(shared) is None  # ambiguous: the author must give the id
    assert tour.resolve("no such node") is None


# ------------------------------------------------------------------------------ per-module frames


def test_every_module_has_its_own_frame_with_children_collapsed(graph: dict) -> None:
    frames = module_frames(graph)
    view = build_view(graph, depth=99)
    modules = {n for n in view.nodes if view.is_cluster(n)}
    assert set(frames) == modules | {None}
    for module, frame in frames.items():
        assert [b.id for b in frame.boxes] == [n for n in view.visible if view.parent[n] == module]
        for b in frame.boxes:
            assert b.collapsed == (b.kind == "module") and not b.is_cluster
            assert 0 <= b.x and b.x + b.w <= frame.width and 0 <= b.y and b.y + b.h <= frame.height
        for i, a in enumerate(frame.boxes):
            for b in frame.boxes[i + 1:]:
                assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y, (a.id, b.id)
        ends = {b.id for b in frame.boxes} | {module}
        for e in frame.edges:
            assert e.source in ends and e.target in ends and len(e.points) >= 2
    # a module's frame is laid out exactly as the default view lays out that module when its
    # children are collapsed: the picture the page composes matches the one the build would draw
    rope = "block.attention.query_rope"
    alone = layout_graph(graph, depth=0, expand=[rope])
    cluster = alone.box(rope)
    for b in frames[rope].boxes:
        drawn = alone.box(b.id)
        assert (round(drawn.x - cluster.x, 1), round(drawn.y - cluster.y, 1)) == (b.x, b.y)


def test_frame_files_are_deterministic_and_name_every_module(graph: dict) -> None:
    files = frame_files(graph, "k")
    assert files == frame_files(copy.deepcopy(graph), "k")
    index = json.loads(re.fullmatch(r'tensorvizData\("k","index.js",(.*)\);\n', files["index.js"], re.S).group(1))
    assert set(index["modules"]) == {m for m in module_frames(graph) if m is not None}
    assert set(files) == {"index.js", index["root"], *(f for _, f in index["modules"].values())}
    for module, (_, name) in index["modules"].items():
        assert files[name].startswith(f'tensorvizData("k",{json.dumps(module)},')


# --------------------------------------------------------------------------------------- diagram


def test_diagram_svg_accessible_and_deterministic(diagram: dict) -> None:
    text = diagram_to_svg(diagram, id_prefix="tv-d")
    assert text == diagram_to_svg(copy.deepcopy(diagram), id_prefix="tv-d")
    root = ET.fromstring(text)
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "tv-d-title tv-d-desc"
    assert root.find(f"{SVG}title").text == diagram["title"]
    assert root.find(f"{SVG}desc").text == diagram["alt"]
    nodes = [g for g in root.iter(f"{SVG}g") if "tv-dnode" in g.get("class", "").split()]
    assert len(nodes) == len(diagram["panel"]["nodes"])
    att = next(g for g in nodes if g.get("data-node") == "att")
    spans = [t.text for t in att.iter(f"{SVG}tspan")]
    assert spans == diagram["panel"]["nodes"][2]["label"].split("\n")
    assert "V" in ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    sizes = [float(t.get("font-size")) for t in root.iter(f"{SVG}text")]
    assert min(sizes) >= 12


def test_diagram_curves_bend_away_from_the_centre_path(diagram: dict) -> None:
    panel = diagram["panel"]
    nodes = {n["id"]: n for n in panel["nodes"]}
    centre = 5.0
    expected = {("x", "a1"): "left", ("a1", "a2"): "right", ("ln1", "v"): "right"}
    root = ET.fromstring(diagram_to_svg(diagram, id_prefix="tv-d"))
    paths = {(p.get("data-from"), p.get("data-to")): p.get("d") for p in root.iter(f"{SVG}path") if p.get("data-from")}
    for edge in panel["edges"]:
        key = (edge["from"], edge["to"])
        p0, ctrl, p2 = edge_geometry(edge, nodes)
        if key not in expected:
            assert ctrl is None and "Q" not in paths[key]
            continue
        assert ctrl is not None
        chord_mid_x = (p0[0] + p2[0]) / 2
        side = "left" if ctrl[0] < chord_mid_x else "right"
        assert side == expected[key], key
        assert (ctrl[0] < centre) == (expected[key] == "left")
        # The drawn path's control point is the same point, scaled to px.
        m = re.search(r"Q(-?[\d.]+),(-?[\d.]+)", paths[key])
        assert m is not None
        start = re.match(r"M(-?[\d.]+),", paths[key])
        assert (float(m.group(1)) < float(start.group(1))) == (expected[key] == "left")


def test_arc3_matches_matplotlib_convention() -> None:
    # matplotlib (y up): c = mid + rad * (dy, -dx). Going down the page from (0, 0) to (0, 2) in
    # y-down coordinates is going from (0, 0) to (0, -2) in y-up ones: c = (rad * -2, ...).
    cx, cy = arc3_control((0.0, 0.0), (0.0, 2.0), 0.5)
    assert (cx, cy) == (-1.0, 1.0)
    cx, _ = arc3_control((0.0, 0.0), (0.0, 2.0), -0.5)
    assert cx == 1.0


def test_a_warm_page_write_does_not_lay_the_graph_out_again(graph: dict, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The SVG and the outline are cached per drawing; the layout runs only when one of them misses."""
    from sphinx_tensorviz.features.graph import render as graph_module
    from sphinx_tensorviz.render.cache import RenderCache
    from sphinx_tensorviz.render.page import RenderContext

    calls: list[int] = []
    real = graph_module.layout_graph
    monkeypatch.setattr(graph_module, "layout_graph", lambda *a, **k: calls.append(1) or real(*a, **k))
    artifact = {"contentHash": "0" * 64, "data": graph, "request": {"entry": "<inline>", "files": {}}}
    ctx = RenderContext(RenderCache(tmp_path / "cache"), tmp_path, tmp_path / "html", "page.html")
    first = graph_module.graph_parts(artifact, {"depth": 2}, "r" * 64, ctx)
    assert calls == [1]  # one layout for the SVG and the outline together
    second = graph_module.graph_parts(artifact, {"depth": 2}, "r" * 64, ctx)
    assert calls == [1] and second.svg == first.svg  # warm: nothing laid out again
    assert second.details[1].astext() == first.details[1].astext()  # the same outline, from the cache
    assert (tmp_path / "html" / "_tensorviz" / "graphs").is_dir()  # module frames next to the page


def test_an_ambiguous_or_unknown_target_warns_with_the_candidates(graph: dict, caplog: pytest.LogCaptureFixture) -> None:
    from sphinx_tensorviz.features.graph.tour.render import resolve_target

    tour = GraphOnPage("fig", {"data": graph}, 2, ())
    shared = next(label for label, ids in tour.drawn_labels.items() if len(ids) > 1)
    with caplog.at_level("WARNING"):
        assert resolve_target(tour, shared, None, "step 'x': target") is None
        assert resolve_target(tour, "block.atention", None, "step 'y': target") is None
        assert resolve_target(tour, "block.attention", None, "step 'z': target") == "block.attention"
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert f"is the label of {len(tour.drawn_labels[shared])} nodes" in messages[0]
    assert tour.drawn_labels[shared][0] in messages[0]
    assert "closest: block.attention" in messages[1]
