"""The jaxpr internals the graph builder reads, in one place.

The jaxpr is not a stable public API, so every access to it lives here and degrades
gracefully: a missing traceback only means a node without a ``source`` line, an unknown
call primitive is drawn as one op.
"""

from __future__ import annotations

import math
import os
import sysconfig
from functools import cache
from types import CodeType
from typing import Any

#: Parameters that may hold the jaxpr of a nested call, by primitive.
_CALL_JAXPR_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")
#: Primitives that are plain calls of another jaxpr (safe to inline or collapse).
_CALLS = {"jit", "pjit", "closed_call", "core_call", "remat", "checkpoint",
          "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"}
#: Calls drawn as named groups (a ``jit`` carries the function's name); the others are transparent.
NAMED_CALLS = {"jit", "pjit"}


def scope_names(eqn: Any) -> list[str]:
    """The ``jax.named_scope`` names of an equation, outermost first; transforms (vmap, jvp) dropped."""
    stack = getattr(getattr(eqn.source_info, "name_stack", None), "stack", ())
    return [elem.name for elem in stack if type(elem).__name__ == "Scope" and isinstance(elem.name, str)]


def is_backward(eqn: Any) -> bool:
    """Whether an equation belongs to the backward pass of a ``grad`` (a ``transpose`` transform)."""
    stack = getattr(getattr(eqn.source_info, "name_stack", None), "stack", ())
    return any(type(elem).__name__ == "Transform" and elem.name == "transpose" for elem in stack)


def called_jaxpr(eqn: Any) -> Any | None:
    """The jaxpr of a plain nested call whose inputs/outputs line up with the equation's."""
    if eqn.primitive.name not in _CALLS:
        return None
    for key in _CALL_JAXPR_PARAMS:
        sub = eqn.params.get(key)
        inner = getattr(sub, "jaxpr", sub)
        if hasattr(inner, "eqns") and len(inner.invars) == len(eqn.invars) \
                and len(inner.outvars) == len(eqn.outvars):
            return sub
    return None


def has_scopes(sub: Any) -> bool:
    """Whether any equation inside ``sub`` (at any depth) runs under a named scope."""
    inner = getattr(sub, "jaxpr", sub)
    for eqn in inner.eqns:
        if scope_names(eqn):
            return True
        nested = called_jaxpr(eqn)
        if nested is not None and has_scopes(nested):
            return True
    return False


def call_name(eqn: Any, sub: Any) -> str:
    """Readable name of a collapsed call: ``silu`` for ``jit[name=silu]``; relu's custom_jvp wraps a jit."""
    name = eqn.params.get("name")
    if isinstance(name, str) and name.isidentifier():
        return name
    inner = getattr(sub, "jaxpr", sub)
    if len(inner.eqns) == 1:
        name = inner.eqns[0].params.get("name")
        if isinstance(name, str) and name.isidentifier():
            return name
    return eqn.primitive.name


def is_literal(var: Any) -> bool:
    """Inline constants such as ``0.0:f32[]`` (unhashable in some jax versions, so test by name)."""
    return type(var).__name__ == "Literal"


def describe(var: Any) -> dict[str, Any]:
    aval = var.aval
    return {"shape": [int(d) for d in getattr(aval, "shape", ())], "dtype": str(getattr(aval, "dtype", ""))}


def eqn_params(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON-simple equation parameters (``axes``, ``dimension_numbers``...)."""
    simple = {}
    for key in sorted(params):
        value = _jsonable(params[key])
        if value is not None:
            simple[key] = value
    return simple


def _jsonable(value: Any) -> Any:
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list)):
        items = [_jsonable(item) for item in value]
        return None if any(item is None for item in items) else items
    return None


def source_line(eqn: Any, model_file: str) -> dict[str, int] | None:
    """Lines of the innermost frame in ``model_file`` that created the equation."""
    try:
        codes, lastis = eqn.source_info.traceback.raw_frames()
        for code, lasti in zip(codes, lastis):
            if os.path.realpath(code.co_filename) == model_file:
                return code_span(code, lasti, code.co_firstlineno)
    except Exception:  # noqa: BLE001 - traceback internals vary between jax versions
        return None
    return None


def code_span(code: CodeType, lasti: int, fallback: int) -> dict[str, int]:
    """``{"line", "endLine"}`` of the instruction at ``lasti`` (a whole multi-line call)."""
    positions = _positions(code)
    line, end_line = positions[lasti // 2][:2] if lasti // 2 < len(positions) else (None, None)
    line = line or fallback
    return {"line": line, "endLine": max(end_line or line, line)}


@cache
def _positions(code: CodeType) -> list[tuple[Any, ...]]:
    return list(code.co_positions())


def inner_jaxpr(sub: Any) -> Any:
    """The open jaxpr of a ``ClosedJaxpr`` (or the jaxpr itself)."""
    return getattr(sub, "jaxpr", sub)


def count_ops(sub: Any) -> int:
    """Primitive equations inside a call, nested calls counted through."""
    total = 0
    for eqn in inner_jaxpr(sub).eqns:
        nested = called_jaxpr(eqn)
        total += count_ops(nested) if nested is not None else 1
    return total


def literal_value(var: Any) -> Any:
    return var.val


def evaluate(eqn: Any, values: list[Any]) -> list[Any]:
    """Run one equation eagerly, as ``jax.core.eval_jaxpr`` does, and return its outputs."""
    bound = eqn.primitive.get_bind_params(eqn.params)
    subfuns, params = bound if isinstance(bound, tuple) else ((), bound)  # older jax: (subfuns, params)
    result = eqn.primitive.bind(*subfuns, *values, **params)
    return list(result) if eqn.primitive.multiple_results else [result]


@cache
def library_dirs() -> tuple[str, ...]:
    """Folders of installed packages and the standard library, longest first."""
    found = {os.path.realpath(sysconfig.get_paths()[key]) + os.sep
             for key in ("purelib", "platlib", "stdlib", "platstdlib")}
    return tuple(sorted(found, key=len, reverse=True))


def code_location(code: CodeType) -> dict[str, Any] | None:
    """Where a library function is defined: its file relative to the installation folder, and
    first line (``None`` for the user's own files, whose lines the model-file viewer shows)."""
    real = os.path.realpath(code.co_filename)
    for base in library_dirs():
        if real.startswith(base):
            return {"file": real[len(base):].replace(os.sep, "/"), "line": code.co_firstlineno}
    return None


def definition_of(sub: Any, name: str) -> dict[str, Any] | None:
    """Where the function a ``jit`` equation calls is defined, from its body's tracebacks."""
    for eqn in inner_jaxpr(sub).eqns:
        try:
            codes, _ = eqn.source_info.traceback.raw_frames()
        except Exception:  # noqa: BLE001 - traceback internals vary between jax versions
            return None
        for code in codes:
            if code.co_name == name:
                return code_location(code)
    return None
