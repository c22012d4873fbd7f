"""Per-module layout data for the page script: any module opens, in any combination, no cap.

Why data and not pictures: pre-drawing one whole SVG per collapsible module made a page's weight
grow with the number of modules (a 2-layer GPT-2 page was 883 KB) and could open only one module
at a time. Instead every module's own layout (:func:`.graph_layout.module_frames`: its children
laid out by the one Python layout, child modules collapsed) is written next to the HTML as a small
script file, with its boxes already drawn by the same functions as the static SVG. The page
script loads a module's file when a reader opens it and composes it into the picture, moving the
rest aside (``static/tensorviz/tensorviz-compose.js``). Nothing is loaded until a module is opened, so
the page carries only what it draws by default.

Files are JavaScript (``tensorvizData(key, name, payload)``), not JSON, because a script element
loads from ``file://`` pages too, where browsers refuse ``fetch``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Optional

from ...core.kept_files import replace_atomically
from ...render.outputs import declare_output, write_or_warn
from ...render.svg import ID_TOKEN
from .layout import Box, Frame, module_frames
from .svg import draw_cluster, draw_edge_label, draw_node
from .view import short_label

__all__ = ["FOLDER", "frame_files", "write_frame_files"]

#: Where the files go, relative to the HTML output folder (one sub-folder per graph drawing).
FOLDER = "_tensorviz/graphs"
INDEX = "index.js"


def _frame_payload(frame: Frame, nodes: Mapping[str, Mapping[str, Any]],
                   source_href: Optional[Callable[[dict], Optional[str]]]) -> dict[str, Any]:
    """One module's frame: its size and ports, its boxes drawn in its own coordinates, its hops."""
    boxes = [[b.id, b.x, b.y, b.w, b.h, draw_node(b, nodes[b.id], ID_TOKEN, source_href)] for b in frame.boxes]
    by_id = {b.id: b for b in frame.boxes}
    headings: dict[str, list[float]] = {}
    for e in frame.edges:
        if len(e.points) > 1:
            headings.setdefault(e.source, []).append(e.points[1][0] - e.points[0][0])
    edges = []
    labelled: set[str] = set()
    for e in frame.edges:
        label = ""
        if e.label and e.source in by_id and e.source not in labelled and len(e.points) > 1:
            labelled.add(e.source)
            label = draw_edge_label(by_id[e.source], e, headings[e.source]) or ""
        edges.append([e.source, e.target, [c for p in e.points for c in p], label])
    payload: dict[str, Any] = {"w": frame.width, "h": frame.height, "in": frame.in_x, "out": frame.out_x,
                               "boxes": boxes, "edges": edges}
    if frame.module is not None:
        node = nodes[frame.module]
        parent = None if node.get("parent") is None else str(node.get("parent"))
        own = Box(id=frame.module, label=short_label(node, parent), op="", kind="module", x=0.0, y=0.0,
                  w=frame.width, h=frame.height, collapsed=False, is_cluster=True, parent=parent,
                  in_x=frame.in_x, out_x=frame.out_x)
        payload["cluster"] = draw_cluster(own, node, ID_TOKEN, source_href)
    return payload


def frame_files(graph: Mapping[str, Any], key: str,
                source_href: Optional[Callable[[dict], Optional[str]]] = None) -> dict[str, str]:
    """File name -> text: ``index.js`` (module tree and file numbers) and one file per module."""
    frames = module_frames(graph)
    layers = list(graph.get("layers") or ())
    nodes = {str(n.get("id")): n for n in reversed(layers)}  # the first of duplicate ids wins, as in the view
    order = {str(n.get("id")): i for i, n in reversed(list(enumerate(layers)))}
    files: dict[str, str] = {}
    modules: dict[str, list[Any]] = {}
    ordered = sorted(frames, key=lambda m: -1 if m is None else order.get(m, 0))
    for number, module in enumerate(ordered):
        name = f"m{number}.js"
        payload = _frame_payload(frames[module], nodes, source_href)
        files[name] = _script(key, "" if module is None else module, payload)
        if module is not None:
            parent = nodes[module].get("parent")
            modules[module] = [None if parent is None else str(parent), name]
    files[INDEX] = _script(key, INDEX, {"root": "m0.js", "modules": modules})
    return files


def _script(key: str, name: str, payload: Any) -> str:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return f"tensorvizData({json.dumps(key)},{json.dumps(name, ensure_ascii=False)},{data});\n"


def write_frame_files(files: Mapping[str, str], key: str, outdir: Path) -> str:
    """Write the files (:func:`frame_files`) under ``outdir`` once per key; returns their folder
    relative to ``outdir``."""
    folder = f"{FOLDER}/{key}"
    target = outdir / folder
    ordered = sorted(files.items(), key=lambda item: item[0] == INDEX)  # index last: it marks "done"
    for name, text in ordered:
        declare_output(target / name, text.encode("utf-8"))
    write_or_warn(target / INDEX, lambda: _write_frames(ordered, target))
    return folder


def _write_frames(ordered: list[tuple[str, str]], target: Path) -> None:
    if (target / INDEX).is_file():  # the key names the graph and the renderer: same key, same files
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.mkdir()
        mine = True  # this process made the folder: no other writer is in it, write in place
    except FileExistsError:
        mine = False  # another writer (sphinx -j), or an interrupted build: write each file atomically
    for name, text in ordered:
        if mine:
            (target / name).write_text(text, "utf-8")
            continue
        replace_atomically(target / name, text)  # the same key's writers write the same bytes
