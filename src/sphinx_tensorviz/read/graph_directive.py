"""``tv-graph``: a traced model graph (executed) or an authored dataflow diagram (drawn as given)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import yaml
from docutils import nodes
from docutils.parsers.rst import directives

from ..core.hashing import sha256_text
from ..core.ids import canonical
from ..execute.layouts import normalise_layout
from ..warnings_ import Subtype
from . import options as opt
from .directives import Converter, ExecutedDirective
from .sources import SourceError, local_imports, resolve_inside
from .sweep import sweep_option


def layout_option(argument: str | None) -> str | dict[str, str]:
    """``channels`` (every checkpoint) or ``{conv1: channels, attn: heads}`` (per checkpoint)."""
    text = (argument or "").strip()
    if text.startswith("{"):
        value = opt.yaml_mapping(text)
        return {canonical(str(name)): normalise_layout(str(layout)) for name, layout in value.items()}
    return normalise_layout(text)

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
        "checks-source": directives.unchanged_required,
        "call-args": opt.yaml_mapping,
        "layout": layout_option,
        "collapse": opt.name_list,
        "hide": opt.name_list,
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
        if "checkpoints" in values:
            values["checkpoints"] = [canonical(name) for name in values["checkpoints"]]
        if "checks" in values:
            values["checks"] = [self.check_reference(name) for name in values["checks"]]
        if isinstance(values.get("layout"), dict):
            unknown = sorted(set(values["layout"]) - set(values.get("checkpoints", [])))
            if unknown:
                raise ValueError(f":layout: names {', '.join(unknown)}, which :checkpoints: does not record")
        if "checks-source" in values:
            values["checks-source"] = self.project_path(values["checks-source"], ":checks-source:")
        return values

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result = {
            "model_args": values.get("model-args", {}),
            "inputs": values.get("inputs", []),
            "checkpoints": values.get("checkpoints", []),
            "token": values.get("token", -1),
            "checks": values.get("checks", []),
        }
        # Newer options enter the request only when given, so older artifacts keep their names.
        for option, key in (("call-args", "call_args"), ("layout", "layout"), ("collapse", "collapse"),
                            ("hide", "hide"), ("checks-source", "checks_source")):
            if option in values:
                result[key] = values[option]
        return result

    # -- checks from other files ----------------------------------------------
    def project_path(self, given: str, what: str) -> str:
        """A ``.py`` path relative to this page, as a path relative to the course folder."""
        srcdir = Path(self.env.srcdir)
        _, absolute = self.env.relfn2path(given.strip(), self.env.docname)
        self.env.note_dependency(absolute)
        path = resolve_inside(srcdir, Path(absolute), given)
        if path.suffix != ".py":
            raise ValueError(f"{what} {given!r} is not a .py file")
        return path.relative_to(srcdir.resolve()).as_posix()

    def check_reference(self, name: str) -> str:
        """``check`` as is; ``path.py:check`` with the path made course-relative; ``module:check``."""
        where, sep, function = name.rpartition(":")
        if not sep:
            return name
        if not function.isidentifier() or not where:
            raise ValueError(f":checks: {name!r} should look like check_name, checks.py:check_name "
                             "or package.module:check_name")
        if where.endswith(".py"):
            return f"{self.project_path(where, ':checks:')}:{function}"
        if not all(part.isidentifier() for part in where.split(".")):
            raise ValueError(f":checks: {where!r} is neither a .py path nor a module name")
        return name

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """The model's code plus every project file the checks come from, so editing them re-runs."""
        entry, files, inline, importer = super().gather_code(values)
        srcdir = Path(self.env.srcdir).resolve()
        wanted = [values["checks-source"]] if "checks-source" in values else []
        wanted += [name.rpartition(":")[0] for name in values.get("checks", []) if ":" in name]
        code = ""
        for where in wanted:
            if where.endswith(".py"):
                path = srcdir / where
                files.setdefault(where, sha256_text(path.read_text("utf-8")))
                code += path.read_text("utf-8") + "\n"
            else:
                code += f"import {where}\n"
        for module in local_imports(code, importer, srcdir) if code else []:
            self.env.note_dependency(str(module))
            files.setdefault(module.relative_to(srcdir).as_posix(), sha256_text(module.read_text("utf-8")))
        return entry, files, inline, importer

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
