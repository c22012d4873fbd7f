"""``:frameworks: torch, jax``: one figure computed by a PyTorch and a JAX implementation, checked to agree.

Shared by every executed directive whose kind opts in (its :class:`~..core.kinds.FigureKind` names the
option that carries a framework's code, ``framework_code``): the directive is read once per framework,
with ``:torch:`` (or ``:jax:``) as that option and ``:backend:`` as the framework, so each framework's
request is exactly the one a single-framework figure would make (its own job and content hash: editing
the JAX file changes only the JAX request). A kind that runs a model (``framework_code = "model"``) gets
one more job, the *shared weights*, made once from the seed by the PyTorch model (or copied from
``:weights:``), which every framework's model loads (``options["trained"]``, as for ``:model: @name``,
so the execution phase needs nothing new to find it); and every figure gets the *comparison* job, whose
content hash is the hash of the frameworks' content hashes.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.parsers.rst import directives

from ..core.frameworks import (
    FRAMEWORKS_CHECK,
    FRAMEWORKS_CHECK_KIND,
    SHARED_WEIGHTS,
    SHARED_WEIGHTS_KIND,
    Frameworks,
)
from ..core.hashing import sha256_text
from ..core.nodes import tensorviz_figure
from ..core.request import INLINE, TRAINED, ExecutionRequest
from ..core.state import add_request
from ..warnings_ import Subtype
from . import options as opt
from .framework_tabs import framework_tabs
from .sources import SourceError, resolve_inside

if TYPE_CHECKING:
    from .directives import ExecutedDirective

#: the frameworks a figure may be computed in (NumPy code has no framework to compare with)
FRAMEWORKS = ("torch", "jax")
#: the options that name the code of a single-framework figure (each framework's option replaces them)
SINGLE_CODE = ("backend", "model", "source", "function")


def frameworks_option(argument: str | None) -> list[str]:
    """``torch, jax``: two or more frameworks, each once, in the order the page shows them."""
    names = [name.lower() for name in opt.name_list(argument)]
    unknown = [name for name in names if name not in FRAMEWORKS]
    if unknown:
        raise ValueError(f"{', '.join(unknown)} is not a framework; give {' and '.join(FRAMEWORKS)}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError("name each framework once, at least two, e.g. torch, jax")
    return names


def weight_map_option(argument: str | None) -> dict[str, str] | str:
    """``{torch name: jax name}``, or ``file.py:function`` that returns it (called in the worker with both
    sides' ``{name: shape}``)."""
    text = (argument or "").strip()
    where, sep, name = text.rpartition(":")
    if sep and where.endswith(".py") and name.isidentifier():
        return text
    return {str(k): str(v) for k, v in opt.yaml_mapping(text).items()}


def show_option(argument: str | None) -> str:
    """``one`` (the default: one figure when the frameworks agree) or ``both`` (each framework's figure)."""
    return directives.choice((argument or "").strip().lower(), ("one", "both"))


#: the options ``:frameworks:`` adds to every executed directive, with their converters
FRAMEWORK_OPTIONS = {
    "frameworks": frameworks_option,
    **{name: directives.unchanged_required for name in FRAMEWORKS},
    "weights": directives.unchanged_required,
    "weight-map": weight_map_option,
    "show": show_option,
}


def run_frameworks(directive: ExecutedDirective) -> list[nodes.Node]:
    """Record every request of the figure and leave its node (or a located warning and error box)."""
    try:
        frameworks, values = read_frameworks(directive)
    except (ValueError, SourceError) as exc:
        return [directive.problem(str(exc), Subtype.source if isinstance(exc, SourceError) else Subtype.option)]
    for request in frameworks.all_requests():
        add_request(directive.env, request)
    names = list(frameworks.requests)
    figures = {names[0]: directive.figure_node(values, request=frameworks.first, frameworks=frameworks,
                                               framework=names[0])}
    for name in names[1:]:  # ``:show: both``: each framework's figure, in its tab (the first keeps the name)
        figures[name] = _unnamed_figure(directive, figures[names[0]], frameworks, name)
    srcdir = Path(directive.env.srcdir)
    if frameworks.show == "both":
        return [framework_tabs(frameworks, srcdir, figures)]
    return [framework_tabs(frameworks, srcdir), figures[names[0]]]


def _unnamed_figure(directive: ExecutedDirective, first: nodes.Element, frameworks: Frameworks,
                    name: str) -> nodes.Element:
    from .directives import new_figure_id  # the module that imports this one

    node = tensorviz_figure(figure_id=new_figure_id(directive), classes=list(first["classes"]),
                            request=frameworks.requests[name], frameworks=frameworks, framework=name)
    directive.set_source_info(node)
    return node


def read_frameworks(directive: ExecutedDirective) -> tuple[Frameworks, dict[str, Any]]:
    """The figure's requests, and the first framework's converted options (for the node's classes)."""
    raw = dict(directive.options)
    names = _checked_names(directive, raw)
    shared = {name: value for name, value in raw.items() if name not in FRAMEWORK_OPTIONS}
    requests: dict[str, ExecutionRequest] = {}
    first_values: dict[str, Any] = {}
    try:
        for name in names:  # read as the single-framework figure each framework's code would be
            directive.options = {**shared, **_code_options(directive.kind.framework_code, raw[name]), "backend": name}
            values = directive.converted_options()
            requests[name] = directive.build_request(values)
            first_values = first_values or values
    finally:
        directive.options = raw
    weights = None
    if directive.kind.framework_code == "model":
        weights = _weights_request(directive, raw, requests)
        weight_map = _weight_map(directive, raw.get("weight-map"))
        requests = {name: _sharing(request, weights, weight_map) for name, request in requests.items()}
    elif "weights" in raw or "weight-map" in raw:
        raise ValueError(f":weights: and :weight-map: are for figures that run a model, not {directive.name}")
    check = replace(
        next(iter(requests.values())), directive=FRAMEWORKS_CHECK, runner=FRAMEWORKS_CHECK_KIND.run, backend="numpy",
        entry=INLINE, inline_code="", files={}, function=None, options={}, render={}, hashed_extra={}, versions=None,
        inputs={"frameworks": [[name, request.content_hash] for name, request in requests.items()]})
    show = show_option(raw["show"]) if "show" in raw else "one"
    return Frameworks(requests, check, weights, show), first_values


def _checked_names(directive: ExecutedDirective, raw: dict[str, Any]) -> list[str]:
    if "frameworks" not in raw:
        given = next(name for name in FRAMEWORK_OPTIONS if name in raw)
        raise ValueError(f":{given}: belongs to a figure with :frameworks: torch, jax")
    if directive.kind.framework_code is None:
        raise ValueError(f":frameworks: is not available on {directive.name} (it runs no framework's code)")
    names = frameworks_option(raw["frameworks"])
    clash = [name for name in SINGLE_CODE if name in raw]
    if clash:
        raise ValueError(f":frameworks: gives each framework's code with :{names[0]}: and :{names[1]}:; leave out "
                         f":{clash[0]}:")
    if "sweep" in raw:
        raise ValueError(":frameworks: and :sweep: cannot be combined on one figure")
    for name in FRAMEWORKS:
        if name in names and not (raw.get(name) or "").strip():
            raise ValueError(f":frameworks: names {name}: give its code with :{name}: path/to/file.py:function")
        if name not in names and name in raw:
            raise ValueError(f":{name}: is given, but :frameworks: does not name {name}")
    return names


def _code_options(code: str | None, reference: str) -> dict[str, str]:
    """``:torch: file.py:make`` as the options a single-framework figure of the kind names its code with."""
    if reference.strip().startswith("@"):
        raise ValueError(f"{reference.strip()}: a trained model (@name) has one framework; give a file.py:function")
    if code == "source":
        path, function = opt.model_reference(reference)
        return {"source": path, "function": function}
    return {str(code): reference}


def _project_file(directive: ExecutedDirective, given: str) -> tuple[str, Path]:
    """A path relative to the page, as a path relative to the course folder (it must be inside)."""
    _, absolute = directive.env.relfn2path(given.strip(), directive.env.docname)
    directive.env.note_dependency(absolute)
    path = resolve_inside(Path(directive.env.srcdir), Path(absolute), given.strip())
    return path.relative_to(Path(directive.env.srcdir).resolve()).as_posix(), path


def _weights_request(directive: ExecutedDirective, raw: dict[str, Any],
                     requests: dict[str, ExecutionRequest]) -> ExecutionRequest:
    """The shared weights' job: copying ``:weights:``, or building the PyTorch model from the seed."""
    blank = {"render": {}, "hashed_extra": {}, "directive": SHARED_WEIGHTS, "runner": SHARED_WEIGHTS_KIND.run}
    if "weights" in raw:
        relative, path = _project_file(directive, raw["weights"])
        if path.suffix != ".safetensors":
            raise ValueError(f":weights: {raw['weights']!r} is not a .safetensors file")
        first = next(iter(requests.values()))
        return replace(first, backend="numpy", entry=INLINE, inline_code="", function=None, inputs={},
                       files={relative: hashlib.sha256(path.read_bytes()).hexdigest()}, options={"file": relative}, versions=None,
                       **blank)
    if "torch" not in requests:
        raise ValueError("the shared weights are made by the PyTorch model: add torch to :frameworks:, or give "
                         ":weights: file.safetensors")
    torch = requests["torch"]
    return replace(torch, inputs={}, options={"model_args": torch.options.get("model_args") or {}}, **blank)


def _weight_map(directive: ExecutedDirective, given: Any) -> dict[str, Any] | None:
    """``:weight-map:`` as the jobs carry it: the mapping, or the function's file (course-relative) and
    its sha256, so editing the function re-runs the frameworks that use it."""
    if given is None:
        return None
    value = weight_map_option(given)
    if isinstance(value, dict):
        return {"pairs": value}
    where, _, function = value.rpartition(":")
    relative, path = _project_file(directive, where)
    return {"function": f"{relative}:{function}", "sha256": sha256_text(path.read_text("utf-8"))}


def _sharing(request: ExecutionRequest, weights: ExecutionRequest, weight_map: dict[str, Any] | None
             ) -> ExecutionRequest:
    """``request`` loading the shared weights (hashed: new weights re-run every framework; the map only
    where it applies, so editing it re-runs the JAX side alone)."""
    shared = {"from": "torch", **({"map": weight_map} if weight_map and request.backend != "torch" else {})}
    return replace(request, options={**request.options, TRAINED: {
        "name": "shared weights", "training": weights.content_hash, "step": 0, "shared": shared}})
