"""``tv-graph``: a traced model graph (executed) or an authored dataflow diagram (drawn as given)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import yaml
from docutils import nodes
from docutils.parsers.rst import directives

from ..warnings_ import Subtype
from . import options as opt
from .directives import Converter, ExecutedDirective
from .sources import SourceError, resolve_inside
from .sweep import sweep_option

DIAGRAM_KEYS = ("panel",)


class GraphDirective(ExecutedDirective):
    """Trace ``:model:`` once in a worker and draw its computation graph, or draw ``:diagram:``."""

    extra_options: ClassVar[dict[str, Converter]] = {
        "model": opt.model_reference,
        "model-args": opt.yaml_mapping,
        "inputs": opt.input_specs,
        "depth": opt.positive_int,
        "expand": opt.name_list,
        "checkpoints": opt.name_list,
        "token": opt.integer,
        "checks": opt.name_list,
        "show-source": directives.flag,
        "diagram": directives.unchanged_required,
        "sweep": sweep_option,
    }
    render_options = (*ExecutedDirective.render_options, "depth", "expand", "show-source")
    sweep_target = "model_args"

    def run(self) -> list[nodes.Node]:
        if "diagram" in self.options or ("model" not in self.options and "source" not in self.options):
            return self.run_diagram()
        return super().run()

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        if "model" in values:
            values["source"], values["function"] = values.pop("model")
        elif "source" in values and "function" not in values:
            raise ValueError("name the model with :model: path/to/file.py:ClassName")
        if "sweep" in values and "choices-check" in values:
            raise ValueError(":choices-check: is not available on a swept tv-graph (no check runs across its points)")
        values.setdefault("backend", "torch")
        values["show-source"] = "show-source" in values
        return values

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        return {
            "model_args": values.get("model-args", {}),
            "inputs": values.get("inputs", []),
            "checkpoints": values.get("checkpoints", []),
            "token": values.get("token", -1),
            "checks": values.get("checks", []),
        }

    # -- authored diagrams ----------------------------------------------------
    def run_diagram(self) -> list[nodes.Node]:
        try:
            values = super().converted_options()
            if "sweep" in values:
                raise ValueError(":sweep: needs a traced model (:model:), not an authored diagram")
            diagram = self.load_diagram(values)
        except (ValueError, SourceError) as exc:
            subtype = Subtype.source if isinstance(exc, SourceError) else Subtype.option
            return [self.problem(str(exc), subtype)]
        render = {name: values[name] for name in ExecutedDirective.render_options if name in values}
        return [self.figure_node(values, request=None, diagram=diagram, render=render)]

    def load_diagram(self, values: dict[str, Any]) -> dict[str, Any]:
        body = "\n".join(self.content)
        if "diagram" in values:
            if body.strip():
                raise ValueError("give the diagram either with :diagram: or in the body, not both")
            _, absolute = self.env.relfn2path(values["diagram"], self.env.docname)
            path = resolve_inside(Path(self.env.srcdir), Path(absolute), values["diagram"])
            self.env.note_dependency(str(path))
            text, shown = path.read_text("utf-8"), values["diagram"]
        elif body.strip():
            text, shown = body, "the directive body"
        else:
            raise ValueError("give :model: path.py:Class to trace a model, or a :diagram: (YAML/JSON) to draw")
        try:
            data = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
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
