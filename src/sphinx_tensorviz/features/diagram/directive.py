"""An authored diagram: ``tv-graph`` with ``:diagram:`` (a YAML or JSON file) or a YAML body.

Nothing runs: the diagram is validated when the page is read, named precisely when it is wrong,
and kept on the figure node for the renderer.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from docutils import nodes

from ...read.directives import ExecutedDirective
from ...read.options import YamlProblem, load_yaml
from ...read.sources import SourceError, resolve_inside
from ...warnings_ import Subtype

#: the figure kind of an authored diagram (the node's ``authored`` attribute)
KIND = "tv-diagram"


def is_diagram(options: dict[str, Any]) -> bool:
    """A ``tv-graph`` with a ``:diagram:``, or with neither ``:model:``, ``:source:`` nor ``:frameworks:`` (a
    YAML body)."""
    return "diagram" in options or not {"model", "source", "frameworks"} & set(options)


def run_diagram(directive: ExecutedDirective) -> list[nodes.Node]:
    """The figure node of an authored diagram (a located problem box when it is invalid)."""
    try:
        values = ExecutedDirective.converted_options(directive)  # the common options, no :model:
        if "sweep" in values:
            raise ValueError(":sweep: needs a traced model (:model:), not an authored diagram")
        diagram = load_diagram(directive, values)
    except (ValueError, SourceError) as exc:
        subtype = Subtype.source if isinstance(exc, SourceError) else Subtype.option
        return [directive.problem(str(exc), subtype)]
    render = {name: values[name] for name in ExecutedDirective.render_options if name in values}
    return [directive.figure_node(values, request=None, authored=KIND, diagram=diagram, render=render,
                                  author_words=diagram_words(diagram))]


#: a diagram's own fields that hold the author's words (beside its nodes' and edges' labels)
TEXT_FIELDS = ("title", "alt", "reading", "prediction", "scope")


def diagram_words(diagram: dict[str, Any]) -> list[str]:
    """The author's words of a diagram, for the course's message catalogue."""
    panel = diagram["panel"]
    found = [diagram[name] for name in TEXT_FIELDS if isinstance(diagram.get(name), str)]
    found += [str(item["label"]) for item in [*panel["nodes"], *(panel.get("edges") or [])] if item.get("label")]
    return [text for text in found if text.strip()]


def load_diagram(directive: ExecutedDirective, values: dict[str, Any]) -> dict[str, Any]:
    body = "\n".join(directive.content)
    env = directive.env
    if "diagram" in values:
        if body.strip():
            raise ValueError("give the diagram either with :diagram: or in the body, not both")
        _, absolute = env.relfn2path(values["diagram"], env.docname)
        path = resolve_inside(Path(env.srcdir), Path(absolute), values["diagram"])
        env.note_dependency(str(path))
        text, shown = path.read_text("utf-8"), values["diagram"]
    elif body.strip():
        text, shown = body, "the directive body"
    else:
        raise ValueError("give :model: path.py:Class to trace a model, or a :diagram: (YAML/JSON) to draw")
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else load_yaml(text)
    except (json.JSONDecodeError, YamlProblem) as exc:
        raise ValueError(f"{shown} is not valid YAML/JSON: {exc}") from None
    if isinstance(data, dict) and isinstance(data.get("diagram"), dict):
        data = data["diagram"]  # a whole artifact document was given
    return validate_diagram(data, shown)


def validate_diagram(data: Any, shown: str) -> dict[str, Any]:
    """Check everything the drawing relies on, naming the first problem precisely."""
    if not isinstance(data, dict) or not isinstance(data.get("panel"), dict):
        raise ValueError(f"{shown}: a diagram needs a 'panel' with 'nodes' and 'edges'")
    panel = data["panel"]
    node_list = panel.get("nodes")
    if not isinstance(node_list, list) or not node_list:
        raise ValueError(f"{shown}: panel.nodes must be a non-empty list")
    ids: set[str] = set()
    for index, node in enumerate(node_list):
        where = f"{shown}: panel.nodes[{index}]"
        missing = [k for k in ("id", "x", "y", "label") if not isinstance(node, dict) or k not in node]
        if missing:
            raise ValueError(f"{where} lacks {', '.join(missing)}")
        if not isinstance(node["id"], str) or not node["id"]:
            raise ValueError(f"{where}: id must be a non-empty string")
        if node["id"] in ids:
            raise ValueError(f"{where}: id {node['id']!r} is used twice")
        ids.add(node["id"])
        for key in ("x", "y", "w", "h"):
            if key in node and not _finite(node[key]):
                raise ValueError(f"{where}: {key} must be a finite number, got {node[key]!r}")
    for key in ("width", "height"):
        if key in panel and not _finite(panel[key]):
            raise ValueError(f"{shown}: panel.{key} must be a finite number")
    for index, edge in enumerate(panel.get("edges") or []):
        if not isinstance(edge, dict):
            raise ValueError(f"{shown}: panel.edges[{index}] must be a mapping with 'from' and 'to'")
        unknown = [edge.get(end) for end in ("from", "to") if edge.get(end) not in ids]
        if unknown:
            raise ValueError(f"{shown}: panel.edges[{index}] names unknown node {unknown[0]!r}; "
                             f"the nodes are {', '.join(sorted(ids))}")
        label_at = edge.get("labelAt")
        if label_at is not None and not (isinstance(label_at, list) and len(label_at) == 2
                                         and all(_finite(v) for v in label_at)):
            raise ValueError(f"{shown}: panel.edges[{index}].labelAt must be two numbers [x, y]")
    return data


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
