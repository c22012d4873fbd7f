"""A figure kind: everything the stages ask of one kind, declared once by the kind's own package.

Why one object: a kind used to be spread over six folders (a runner table here, a schema branch
in the store, a limit branch, a ``run.py`` branch, a ``verify`` branch, a ``show`` branch), each
written as ``if data["kind"] == "heatmap" ... else graph``. Now each stage asks the kind's
:class:`FigureKind` once, and a new kind is one package that declares one (see
``docs/explanation/architecture.md``, "Add a figure kind").

A declaration names its code by ``module:function`` (or ``package:file`` for the schema), resolved
when a stage first uses it: declaring a kind imports nothing, so a worker, the CLI or a build with
nothing to draw load only what they use. The catalogue of declared kinds (:func:`declare`,
:func:`kind_named`) is by name, process-wide, because an artifact names its kind and the store, the
CLI and the drawing look it up from there; a declaration is an immutable description (like a class),
so sharing it between two Sphinx applications in one process is harmless. Which directives an
application has is still per application (``render/registry.py``).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from .config_values import ConfigValue


@dataclass(frozen=True)
class SizeLimit:
    """One size limit of a kind's data (a heatmap's cells, a graph's nodes): stored artifacts are
    committed JSON drawn into a page, so their size is bounded, and a recorded failure over a limit
    runs again once the limit is raised."""

    field: str  #: its key in a job's limits and in a failure record, e.g. ``heatmap_cells``
    value: ConfigValue  #: the ``conf.py`` value that sets it (``tensorviz_max_heatmap_cells``), declared here
    #: ``module:function`` ``(data, limit) -> problem or None``: why ``data`` is over ``limit``
    check: str

    @property
    def default(self) -> Any:
        return self.value.default


@dataclass(frozen=True)
class FigureKind:
    """What the stages ask of one kind of artifact (``data["kind"] == name``)."""

    name: str  #: the artifact's ``data.kind``
    directive: str  #: the directive whose requests record it
    run: str  #: the worker's entry, ``module:function`` ``(lesson module, job) -> {"data", "checks"?}``
    schema: str  #: ``package:file.json``: the JSON Schema of its ``data``
    #: ``module:function`` ``(data) -> [problem]``: what the schema cannot say (shapes agree, ids resolve)
    consistency: str | None = None
    limits: tuple[SizeLimit, ...] = ()
    #: ``module:function`` ``(artifact, render options, renderer hash, context) -> FigureParts``:
    #: the picture and words every builder lays out (HTML, LaTeX/PDF, text)
    parts: str | None = None
    #: ``module:function`` drawing a whole sweep on one scale (else each point is its own figure)
    sweep: str | None = None
    thumbnail_render: Mapping[str, Any] = field(default_factory=dict)  #: render options of a catalogue preview
    #: scripts its HTML figures need, in the package's ``static/`` folder, linked after the shared
    #: helpers and before the page script (in the order the kinds were added)
    scripts: tuple[str, ...] = ()
    #: a module with ``expected_values(artifact) -> {name: {"values", "dtype", ...}}`` (what ``run.py``
    #: compares) and ``script() -> str`` (the source of its ``reproduce()``, the same for every artifact,
    #: so no recorded value can become code); ``None``: the kind has no ``run.py``. It may add
    #: ``framework_values(artifact)``, what ``:frameworks:`` compares where that is more than ``run.py``
    #: recomputes (:mod:`..execute.frameworks_points`)
    reproduce: str | None = None
    #: ``module:function`` ``(comparison, stored data, new data, stored artifact, new result) -> None``:
    #: what ``tensorviz verify`` compares (:class:`~..execute.compare.Comparison`)
    compare: str | None = None
    #: ``module:function`` ``(data) -> str``: the one-line summary ``tensorviz show`` prints
    summary: str | None = None
    #: ``module:function`` ``(data, step) -> {"sha256", "size", "format", ...}``: the weights file of a
    #: step of this kind's recorded model (``LookupError`` names the valid steps), for later figures that
    #: use it (``:model: @name:step``); ``None``: its figures record no model
    snapshot: str | None = None
    #: ``module:function`` ``(NotebookFigure) -> [cell]``: the nbformat 4 cells its figure becomes in a
    #: lesson's notebook (:mod:`.notebook`); ``None``: a code cell that recomputes it with its ``run.py``
    #: ``reproduce()`` and shows the recorded figure as its output (the recorded figure alone without one)
    notebook: str | None = None
    #: raise it when the kind records something else for the same code (from 1 on it is in every
    #: content hash of the kind, so stale artifacts run again; 0 leaves existing hashes as they are)
    version: int = 0
    #: the option that names a figure's code for ``:frameworks:`` (``model``: ``:torch: file.py:make`` is
    #: read as that framework's ``:model:``, and the model's weights are shared; ``source``: as its
    #: ``:source:`` and ``:function:``); ``None``: the kind's figures run in one framework only
    framework_code: str | None = None

    def entry(self, name: str) -> Callable[..., Any]:
        """The function the field ``name`` names, imported on first use."""
        target = getattr(self, name)
        if not target:
            raise LookupError(f"{name!r} is empty in the declaration of the figure kind {self.name!r}")
        return resolve(target)

    def data_schema(self) -> dict[str, Any]:
        """The JSON Schema of this kind's ``data`` (read once per process)."""
        return _schema(self.schema)


#: the mark :func:`worker_entry` leaves on a function
WORKER_ENTRY = "tensorviz_worker_entry"


def worker_entry(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``function`` as a kind's worker entry: the worker calls only a marked function, whatever a
    job names (a job that names ``os:system`` runs nothing)."""
    setattr(function, WORKER_ENTRY, True)
    return function


def resolve(target: str) -> Callable[..., Any]:
    """``module:function`` imported (modules are cached by Python, so this is cheap after the first)."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


@cache
def _schema(target: str) -> dict[str, Any]:
    package, _, name = target.partition(":")
    return json.loads(resources.files(package).joinpath(name).read_text("utf-8"))


_DECLARED: dict[str, FigureKind] = {}


def declare(kind: FigureKind) -> FigureKind:
    """Make ``kind`` known by its name. Declaring it again (its module imported again) replaces the
    declaration; two kinds of one name with different worker entries are refused."""
    known = _DECLARED.get(kind.name)
    if known is not None and known.run != kind.run:
        raise ValueError(f"two figure kinds are named {kind.name!r}: {known.run} and {kind.run}")
    _DECLARED[kind.name] = kind
    return kind


def kind_named(name: Any) -> FigureKind | None:
    """The declared kind of that name (``None``: no package declared it in this process)."""
    return _DECLARED.get(name) if isinstance(name, str) else None


def declared() -> tuple[FigureKind, ...]:
    """Every declared kind, by name."""
    return tuple(kind for _, kind in sorted(_DECLARED.items()))
