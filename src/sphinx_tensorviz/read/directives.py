"""Directives that execute lesson code: they only *describe* the computation.

``run()`` gathers the code (a ``:source:`` file or the inline body, plus the
project-local modules it imports), builds an :class:`ExecutionRequest`, records
it for the executor and leaves a :class:`tensorviz_figure` node. Nothing is
executed and no framework is imported here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ..config import app_of, settings
from ..core.hashing import sha256_text
from ..core.kinds import FigureKind
from ..core.nodes import error_box, tensorviz_figure
from ..core.request import INLINE, TRAINED, ExecutionRequest, default_lesson_id
from ..core.state import add_request
from ..warnings_ import Subtype, warn
from . import options as opt
from .choices import choices_option, merge_choices
from .frameworks import FRAMEWORK_OPTIONS, run_frameworks
from .front_matter import as_written, continuation_hint
from .sources import SourceError, local_imports, resolve_inside
from .sweep import build_sweep

Converter = Callable[[str | None], Any]

#: Options every executing directive accepts, with their converters.
COMMON_OPTIONS: dict[str, Converter] = {
    "source": directives.unchanged_required,
    "function": opt.python_name,
    "backend": opt.backend,
    "seed": opt.seed,
    "inputs": opt.yaml_mapping,
    "title": opt.text,
    "prediction": opt.text,
    "choices": choices_option,
    "choices-check": opt.python_name,
    "alt": opt.text,
    "description": opt.text,
    "lesson": opt.lesson_name,
    "name": directives.unchanged,
    "class": directives.class_option,
}


def figure_slug(docname: str) -> str:
    """A piece of an HTML id that is unique per document (``singlehtml`` joins documents)."""
    return re.sub(r"[^a-z0-9]+", "-", docname.lower()).strip("-") or "doc"


def new_figure_id(directive: SphinxDirective, kind: str = "") -> str:
    """``tv-<document>-[<kind>-]<n>``: stable across builds and ``-j``, unique on a page."""
    infix = f"{kind}-" if kind else ""
    return f"tv-{figure_slug(directive.env.docname)}-{infix}{directive.env.new_serialno('tensorviz')}"


def problem_box(directive: SphinxDirective, message: str, subtype: Subtype) -> nodes.Element:
    """Warn at the directive's file and line, and show the same message on the page."""
    full = f"{directive.name}: {message}"
    warn(full, subtype, location=(directive.env.docname, directive.lineno))
    box = error_box(full)
    directive.set_source_info(box)
    return box


class ExecutedDirective(SphinxDirective):
    """Common parts of every executed figure (``tv-heatmap``, ``tv-graph``, a kind of your own): code,
    backend, seed and accessibility text. A subclass names its :class:`~..core.kinds.FigureKind`."""

    has_content = True
    #: the figure kind this directive records (its declaration names the worker's entry)
    kind: ClassVar[FigureKind]
    #: directive-specific options and their converters
    extra_options: ClassVar[dict[str, Converter]] = {}
    #: options that change the result (hashed with the code)
    result_options: ClassVar[tuple[str, ...]] = ()
    #: options that change only the picture (renderer hash)
    render_options: ClassVar[tuple[str, ...]] = ("title", "prediction", "choices", "choices-check", "alt",
                                                 "description")
    #: where ``:sweep:`` puts a point's values (see :func:`.sweep.build_sweep`)
    sweep_target: ClassVar[str] = "inputs"
    #: result options that hold the author's words (a heatmap's ``:unit:``): recorded in the artifact
    #: as written, collected for the course's message catalogue, translated by the kind's drawing
    author_options: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # docutils would reject bad values with an untyped error; we convert in run()
        # so every problem becomes a located ``tensorviz.option`` warning instead.
        cls.option_spec = {
            name: directives.flag if conv is directives.flag else directives.unchanged
            for name, conv in {**COMMON_OPTIONS, **FRAMEWORK_OPTIONS, **cls.extra_options}.items()
        }

    def run(self) -> list[nodes.Node]:
        if any(name in self.options for name in FRAMEWORK_OPTIONS):  # read once per framework
            return run_frameworks(self)
        try:
            values = self.converted_options()
            request = self.build_request(values)
        except (ValueError, SourceError) as exc:
            subtype = Subtype.source if isinstance(exc, SourceError) else Subtype.option
            return [self.problem(str(exc), subtype)]
        if "sweep" not in values:
            if "sweep-checks" in values:
                return [self.problem(":sweep-checks: needs a :sweep:", Subtype.option)]
            add_request(self.env, request)
            return [self.figure_node(values, request=request)]
        try:
            sweep = build_sweep(request, values["sweep"], values.get("sweep-checks"), self.sweep_target)
        except ValueError as exc:
            return [self.problem(f":sweep: {exc}", Subtype.option)]
        for each in sweep.requests():
            add_request(self.env, each)
        return [self.figure_node(values, request=sweep.points[0].request, sweep=sweep)]

    def figure_node(self, values: dict[str, Any], **attributes: Any) -> tensorviz_figure:
        """The placeholder node, with its page-unique id, classes, source line and ``:name:``."""
        words = [values[name] for name in self.author_options if isinstance(values.get(name), str) and values[name]]
        if words:
            attributes["author_words"] = [*attributes.get("author_words", ()), *words]
        node = tensorviz_figure(figure_id=new_figure_id(self), classes=["tv-figure", *values.get("class", [])],
                                **attributes)
        self.set_source_info(node)
        self.add_name(node)
        return node

    # -- option handling --------------------------------------------------
    def converted_options(self) -> dict[str, Any]:
        specs = {**COMMON_OPTIONS, **self.extra_options}
        values: dict[str, Any] = {}
        for name, raw in as_written(self.options, self.block_text).items():
            try:
                values[name] = specs[name](raw)
            except ValueError as exc:
                hint = continuation_hint(raw, self.block_text, "\n".join(self.content), self.get_source_info()[0])
                raise ValueError(f":{name}: {exc}{hint}") from None
        merge_choices(values)
        return values

    def problem(self, message: str, subtype: Subtype) -> nodes.Element:
        return problem_box(self, message, subtype)

    # -- the request ------------------------------------------------------
    def build_request(self, values: dict[str, Any]) -> ExecutionRequest:
        conf = settings(app_of(self.env))
        entry, files, inline, importer = self.gather_code(values)
        backend = values.get("backend", "numpy")
        return ExecutionRequest(
            directive=self.name,
            docname=self.env.docname,
            lineno=self.lineno,
            lesson_id=values.get("lesson") or default_lesson_id(self.env.docname),
            backend=backend,
            entry=entry,
            files=files,
            inline_code=inline,
            function=values.get("function"),
            inputs=values.get("inputs", {}),
            seed=values.get("seed", 0),
            device=conf.device,
            # a trained model's training and step (``:model: @name``, :mod:`.trained`): hashed, and read by the job
            options={**self.result_values(values), **({TRAINED: values[TRAINED]} if TRAINED in values else {})},
            render={name: values[name] for name in self.render_options if name in values},
            versions=_framework_versions(backend) if conf.hash_versions else None,
            runner=self.kind.run,
            hashed_extra=self.hashed_extra(backend),
        )

    def hashed_extra(self, backend: str) -> dict[str, Any]:
        """What else this kind's content hash covers (at the top level, beside the code and inputs):
        its declared version, once it has one."""
        return {"kindVersion": self.kind.version} if self.kind.version else {}

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        """Directive-specific options that change the result (each subclass says which)."""
        return {name: values.get(name) for name in self.result_options}

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """(entry, {path: sha256}, inline code, importer path), noting dependencies for rebuilds."""
        srcdir = Path(self.env.srcdir)
        body = "\n".join(self.content)
        if "source" in values:
            if body.strip():
                raise ValueError("give the code either with :source: or in the body, not both")
            _, absolute = self.env.relfn2path(values["source"], self.env.docname)
            self.env.note_dependency(absolute)  # so creating a missing file re-reads this page
            path = resolve_inside(srcdir, Path(absolute), values["source"])
            entry, code, inline = path.relative_to(srcdir.resolve()).as_posix(), path.read_text("utf-8"), None
            importer = path
            self.env.note_dependency(str(path))
        elif body.strip():
            entry, code, inline = INLINE, body, body
            importer = Path(self.env.doc2path(self.env.docname))
        else:
            raise ValueError("no code: give :source: (a .py file in the course) or write the code in the body")
        files = {entry: sha256_text(code)}
        for module in local_imports(code, importer, srcdir):
            files[module.relative_to(srcdir.resolve()).as_posix()] = sha256_text(module.read_text("utf-8"))
            self.env.note_dependency(str(module))
        return entry, files, inline, importer


def _framework_versions(backend: str) -> dict[str, str]:
    versions = {}
    for package in sorted({"numpy", backend}):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "missing"
    return versions
