"""``tv-graph``: describe a model to trace once in a worker (an authored ``:diagram:`` is the diagram
feature's variant of the same directive, see :mod:`sphinx_tensorviz.read.variants`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives

from ...core.hashing import sha256_text
from ...core.ids import canonical
from ...core.layouts import normalise_layout
from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.sources import local_imports, resolve_inside
from ...read.sweep import sweep_option
from ...read.trained import model_option, use_model
from ...read.variants import variant_for
from ...warnings_ import Subtype
from . import CAPTURE_VERSIONS, KIND


def layout_option(argument: str | None) -> str | dict[str, str]:
    """``channels`` (every checkpoint) or ``{conv1: channels, attn: heads}`` (per checkpoint; a layout
    name has no colon, so ``conv1: channels`` lines under the key in MyST's front matter are one too)."""
    text = (argument or "").strip()
    if text.startswith("{") or ":" in text:
        value = opt.yaml_mapping(text)
        return {canonical(str(name)): normalise_layout(str(layout)) for name, layout in value.items()}
    return normalise_layout(text)


#: Attribute of the error box left by a ``tv-graph`` whose options failed: its ``:name:``, so the
#: tours and activations that refer to it say that the graph failed, and where.
FAILED_GRAPH = "tv-failed-graph"


class GraphDirective(ExecutedDirective):
    """Trace ``:model:`` once in a worker and draw its computation graph (``:diagram:``: a variant)."""

    extra_options: ClassVar[dict[str, Converter]] = {
        "model": model_option,
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
    kind = KIND

    def hashed_extra(self, backend: str) -> dict[str, Any]:
        """The capture's version, from version 2 on (so graphs of an unchanged capture keep their hash)."""
        capture = CAPTURE_VERSIONS.get(backend, 1)
        return {**super().hashed_extra(backend), **({"captureVersion": capture} if capture > 1 else {})}

    def run(self) -> list[nodes.Node]:
        handler = variant_for(self)  # an authored diagram, drawn as given
        return handler(self) if handler is not None else super().run()

    def problem(self, message: str, subtype: Subtype) -> nodes.Element:
        """The located warning and error box; the box keeps the graph's ``:name:``, so a tour or
        activations that refer to it can say that the graph failed, and where, rather than that the
        page has no graph of that name."""
        box = super().problem(message, subtype)
        if self.options.get("name"):
            box[FAILED_GRAPH] = nodes.fully_normalize_name(self.options["name"])
        return box

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        if "model" in values:
            values["source"], values["function"] = use_model(self, values, values.pop("model"))
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
