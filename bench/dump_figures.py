"""Write the SVG that every drawing function returns for a set of artifacts and diagrams, one file each.

Why: a change to the drawing code must leave the SVG the same (see ``bench/same_svg.py``). The
built pages show only the views a lesson asks for; this dump calls the drawing functions
directly, with more options (tour markers, source links, other colour maps, a shared scale,
every module frame) and with hostile text, so a comparison covers what pages do not.

Run: ``python bench/dump_figures.py OUT [SOURCE ...]``; a source is a folder of artifacts
(``*.json``) or of diagrams (``*.yaml``). Without sources: the course's artifacts and diagrams
and the diagram test root. Uses only the public drawing functions, so it runs on old and new code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

from sphinx_tensorviz.features.diagram.svg import diagram_to_svg
from sphinx_tensorviz.features.graph.activations.maps_svg import small_multiples_svg
from sphinx_tensorviz.features.graph.frames import frame_files
from sphinx_tensorviz.features.graph.layout import layout_graph
from sphinx_tensorviz.features.graph.svg import graph_to_svg
from sphinx_tensorviz.features.heatmap.describe import heatmap_alt
from sphinx_tensorviz.render.cell_grid import cell_grid_svg
from sphinx_tensorviz.render.colors import Scale

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCES = [ROOT / "lessons" / "tensorviz_artifacts", ROOT / "lessons" / "diagrams",
                   ROOT / "tests" / "roots" / "test-graph-diagram" / "diagrams"]
#: Markup, quotes, a right-to-left override and characters XML cannot carry: lesson text is untrusted.
HOSTILE = 'a<script>alert("1")</script> & \'s\' \u202eevil\u202c \x00\x07\x1b ctrl \ufffe end'


def _href(node: dict[str, Any]) -> str | None:
    source = node.get("source")
    return f"#fig-L{source['line']}&x=\"1\"" if isinstance(source, dict) and source.get("line") else None


def heatmaps(name: str, data: dict[str, Any]) -> dict[str, str]:
    alt = heatmap_alt(data)
    shared = Scale("RdBu_r" if data["diverging"] else "viridis", -3.0, 5.0, data["diverging"])
    return {
        f"{name}-heatmap.svg": cell_grid_svg(data, title=f"Heatmap of {data.get('unit')}", alt=alt, colormap=None),
        f"{name}-heatmap-magma.svg": cell_grid_svg(data, title="t", alt=alt, colormap="magma"),
        f"{name}-heatmap-shared.svg": cell_grid_svg(data, title="t", alt=alt, colormap=shared.colormap, scale=shared),
    }


def graphs(name: str, graph: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for depth in (1, 2):
        layout = layout_graph(graph, depth=depth)
        visible = [b.id for b in layout.boxes][:4]
        markers = {box_id: [(k + 1, f"step {k + 1} <b>")] for k, box_id in enumerate(visible)}
        if visible:
            markers[visible[0]].append((9, "again"))
        out[f"{name}-graph-d{depth}.svg"] = graph_to_svg(graph, layout, id_prefix="fig", title="Graph",
                                                         desc="One pass.")
        out[f"{name}-graph-d{depth}-tour.svg"] = graph_to_svg(
            graph, layout, id_prefix="fig", title="Graph", desc="One pass.", source_href=_href, markers=markers)
    for file, text in frame_files(graph, "key", _href).items():
        out[f"{name}-frames-{file}"] = text
    for checkpoint, record in (graph.get("activations") or {}).items():
        if record.get("maps"):
            titles = [f"map {k}" for k in range(len(record["maps"]))]
            out[f"{name}-maps-{checkpoint}.svg"] = small_multiples_svg(
                record["maps"], titles, title=checkpoint, alt="maps", diverging=record.get("layout") == "channels")
        elif record.get("values"):
            row = {"values": [record["values"]], "rows": ["token"], "unit": "activation", "diverging": True,
                   "columns": [f"f{j}" for j in range(len(record["values"]))]}
            out[f"{name}-strip-{checkpoint}.svg"] = cell_grid_svg(row, title=checkpoint, alt="strip", colormap=None)
    return out


def hostile() -> dict[str, str]:
    """The same figures with hostile labels everywhere text can go."""
    data = {"values": [[1.0, -2.0], [0.5, 0.0]], "rows": [HOSTILE, "r2"], "columns": [HOSTILE, "c"],
            "unit": HOSTILE, "diverging": True}
    graph = {"layers": [
        {"id": "input", "label": "input", "op": "Input", "kind": "input", "parent": None,
         "outputs": [{"shape": [1, 4], "dtype": "float32"}]},
        {"id": HOSTILE, "label": HOSTILE, "op": HOSTILE, "kind": "module", "parent": None,
         "source": {"line": 3, "file": HOSTILE}},
        {"id": "lin", "label": "lin", "op": "Linear", "kind": "layer", "parent": HOSTILE,
         "params": {HOSTILE: [HOSTILE, 2]}, "source": {"line": 4, "endLine": 6},
         "outputs": [{"shape": [1, 4], "dtype": HOSTILE}]},
        {"id": "output", "label": "output", "op": "Output", "kind": "output", "parent": None}],
        "connections": [{"id": "e1", "source": "input", "target": "lin"},
                        {"id": "e2", "source": "lin", "target": "output"}]}
    diagram = {"title": HOSTILE, "alt": HOSTILE, "panel": {"width": 4, "height": 3, "nodes": [
        {"id": HOSTILE, "x": 1, "y": 1, "label": HOSTILE + "\nline two", "tone": HOSTILE},
        {"id": "b", "x": 3, "y": 2, "label": "b", "tone": "result"}],
        "edges": [{"from": HOSTILE, "to": "b", "curve": "arc3,rad=0.3", "label": HOSTILE}]}}
    out = {"hostile-heatmap.svg": cell_grid_svg(data, title=HOSTILE, alt=HOSTILE, colormap=None),
           "hostile-maps.svg": small_multiples_svg([[[1.0, 2.0]], [[0.0, -1.0]]], [HOSTILE, "b"], title=HOSTILE,
                                                   alt=HOSTILE, diverging=True),
           "hostile-diagram.svg": diagram_to_svg(diagram, id_prefix="d")}
    out.update(graphs("hostile", graph))
    return out


def dump(out: Path, sources: list[Path]) -> int:
    figures = hostile()
    for folder in sources:
        for path in sorted(folder.glob("*.json")):
            artifact = json.loads(path.read_text("utf-8"))
            data = artifact.get("data") or {}
            if data.get("kind") == "heatmap" or "values" in data and "rows" in data:
                figures.update(heatmaps(path.stem[:16], data))
            elif "layers" in data:
                figures.update(graphs(path.stem[:16], data))
        for path in sorted(folder.glob("*.yaml")):
            diagram = yaml.safe_load(path.read_text("utf-8"))
            figures[f"{path.stem}-diagram.svg"] = diagram_to_svg(diagram, id_prefix="d")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in figures.items():
        (out / name).write_text(text, "utf-8")
    return len(figures)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    count = dump(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]] or DEFAULT_SOURCES)
    print(f"{count} figures written to {sys.argv[1]}")
