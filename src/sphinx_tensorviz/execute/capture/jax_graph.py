"""Record a JAX function as the same graph schema as :mod:`.torch_graph`, via its jaxpr.

``jax.make_jaxpr`` gives every primitive equation with the shapes and dtypes of its
results, and ``jax.named_scope`` names (each equation's ``source_info.name_stack``)
give the module hierarchy. The jaxpr is not a stable public API, so everything that
touches its internals lives in this one small module and degrades gracefully: a
missing traceback only means a node without a ``source`` line.

Nested calls (``jit``, ``custom_jvp_call``, ``custom_vjp_call``, ...) are drawn as
ONE op named after the called function (``silu@block.ffn#0``), as torch.nn layers
are leaves on the PyTorch side, unless the user opened named scopes inside them:
then their equations are inlined under the combined scope so the hierarchy stays
visible. Control flow (``scan``, ``while``, ``cond``) is always one op.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

import jax

__all__ = ["capture_jax_graph"]

#: Parameters that may hold the jaxpr of a nested call, by primitive.
_CALL_JAXPR_PARAMS = ("jaxpr", "call_jaxpr", "fun_jaxpr")
#: Primitives that are plain calls of another jaxpr (safe to inline or collapse).
_CALLS = {"jit", "pjit", "closed_call", "core_call", "remat", "checkpoint",
          "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr"}


def capture_jax_graph(fn: Callable[..., Any], args: tuple, model_file: str) -> dict[str, Any]:
    """Trace ``fn(*args)`` to a jaxpr and return ``{"graph": {...}, "output": fn(*args)}``.

    ``graph`` has ``layers`` (input, module, op and output nodes) and ``connections``
    in the schema of :func:`sphinx_tensorviz.execute.capture.torch_graph.capture_torch_graph`.
    One ``input`` node (``input``, ``input_1``...) is made per array leaf of ``args``.
    """
    closed = jax.make_jaxpr(fn)(*args)
    builder = _Builder(os.path.realpath(model_file))
    jaxpr = closed.jaxpr
    for index, var in enumerate(jaxpr.invars):
        node_id = "input" if index == 0 else f"input_{index}"
        described = _describe(var)
        builder.add_node(node_id, "Input", "input", None, dict(described), None, [described])
        builder.env[var] = node_id
    builder.add_constants(jaxpr.constvars)
    builder.walk(jaxpr, ())
    outputs = [_describe(var) for var in jaxpr.outvars]
    builder.add_node("output", "Output", "output", None, {}, None, outputs)
    builder.connect(builder.producers(jaxpr.outvars), "output")
    return {"graph": {"layers": builder.nodes, "connections": builder.edges}, "output": fn(*args)}


class _Builder:
    """Accumulates nodes and edges while walking a jaxpr in equation order."""

    def __init__(self, model_file: str) -> None:
        self.model_file = model_file
        self.nodes: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.edges: list[dict[str, Any]] = []
        self.edge_keys: set[tuple[str, str]] = set()
        self.env: dict[Any, str] = {}  # jaxpr Var -> producing node id
        self.constants: set[Any] = set()
        self.counters: Counter[tuple[str, str | None]] = Counter()

    def walk(self, jaxpr: Any, outer_scope: tuple[str, ...]) -> None:
        for eqn in jaxpr.eqns:
            scope = outer_scope + _scope_of(eqn)
            sub = _called_jaxpr(eqn)
            if sub is not None and _has_scopes(sub):
                self._inline(eqn, sub, scope)
                continue
            parent = self._module_nodes(scope)
            op = _call_name(eqn, sub) if sub is not None else eqn.primitive.name
            params = {"call": eqn.primitive.name} if sub is not None else _params(eqn.params)
            count = self.counters[(op, parent)]
            self.counters[(op, parent)] += 1
            node_id = f"{op}@{parent or 'root'}#{count}"
            sources = self.producers(eqn.invars, parent)
            self.add_node(node_id, op, "layer", parent, params, _source_line(eqn, self.model_file),
                          [_describe(var) for var in eqn.outvars])
            self.connect(sources, node_id)
            for var in eqn.outvars:
                self.env[var] = node_id

    def _inline(self, eqn: Any, sub: Any, scope: tuple[str, ...]) -> None:
        """Walk a nested call's equations as if they were written in place."""
        inner = getattr(sub, "jaxpr", sub)
        for inner_var, outer_var in zip(inner.invars, eqn.invars):
            if not _is_literal(outer_var):
                self.producers([outer_var], self._module_nodes(scope))  # materialise constants
                if outer_var in self.env:
                    self.env[inner_var] = self.env[outer_var]
        self.add_constants(inner.constvars)
        self.walk(inner, scope)
        for inner_var, outer_var in zip(inner.outvars, eqn.outvars):
            if not _is_literal(inner_var) and inner_var in self.env:  # literals produce nothing
                self.env[outer_var] = self.env[inner_var]

    def add_constants(self, constvars: list[Any]) -> None:
        self.constants.update(constvars)

    def producers(self, variables: list[Any], parent: str | None = None) -> list[str]:
        """Producer ids of jaxpr variables; closed-over constants get a node on first use."""
        found: list[str] = []
        for var in variables:
            if _is_literal(var):
                continue
            if var not in self.env and var in self.constants:
                count = self.counters[("constant", parent)]
                self.counters[("constant", parent)] += 1
                node_id = f"constant@{parent or 'root'}#{count}"
                self.add_node(node_id, "Constant", "layer", parent, {}, None, [_describe(var)])
                self.env[var] = node_id
            producer = self.env.get(var)
            if producer is not None and producer not in found:
                found.append(producer)
        return found

    def _module_nodes(self, scope: tuple[str, ...]) -> str | None:
        """Make sure every prefix of ``scope`` has a module node; return the innermost id."""
        parent = None
        for depth in range(1, len(scope) + 1):
            node_id = ".".join(scope[:depth])
            if node_id not in self.ids:
                self.add_node(node_id, "Module", "module", parent, {}, None, None)
            parent = node_id
        return parent

    def add_node(self, node_id: str, op: str, kind: str, parent: str | None, params: dict[str, Any],
                 source: dict[str, int] | None, outputs: list[dict[str, Any]] | None) -> None:
        node: dict[str, Any] = {"id": node_id, "label": node_id, "op": op, "kind": kind, "parent": parent,
                                "params": params}
        if source is not None:
            node["source"] = source
        if outputs is not None:
            node["outputs"] = outputs
        self.nodes.append(node)
        self.ids.add(node_id)

    def connect(self, sources: list[str], target: str) -> None:
        for source in sources:
            if (source, target) not in self.edge_keys and source != target:
                self.edge_keys.add((source, target))
                self.edges.append({"id": f"edge-{len(self.edges) + 1}", "source": source, "target": target,
                                   "sourcePort": None, "targetPort": None})


# -- jaxpr internals (unstable API: every access is defensive) -----------------------
def _scope_of(eqn: Any) -> tuple[str, ...]:
    """``jax.named_scope`` path of an equation: ``block/ffn`` and ``block.ffn`` both give (block, ffn)."""
    text = str(getattr(eqn.source_info, "name_stack", "") or "")
    return tuple(part for piece in text.split("/") for part in piece.split(".") if part)


def _called_jaxpr(eqn: Any) -> Any | None:
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


def _has_scopes(sub: Any) -> bool:
    """Whether any equation inside ``sub`` (at any depth) runs under a named scope."""
    inner = getattr(sub, "jaxpr", sub)
    for eqn in inner.eqns:
        if _scope_of(eqn):
            return True
        nested = _called_jaxpr(eqn)
        if nested is not None and _has_scopes(nested):
            return True
    return False


def _call_name(eqn: Any, sub: Any) -> str:
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


def _is_literal(var: Any) -> bool:
    """Inline constants such as ``0.0:f32[]`` (unhashable in some jax versions, so test by name)."""
    return type(var).__name__ == "Literal"


def _describe(var: Any) -> dict[str, Any]:
    aval = var.aval
    return {"shape": [int(d) for d in getattr(aval, "shape", ())], "dtype": str(getattr(aval, "dtype", ""))}


def _params(params: dict[str, Any]) -> dict[str, Any]:
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


def _source_line(eqn: Any, model_file: str) -> dict[str, int] | None:
    """Lines of the innermost frame in ``model_file`` that created the equation."""
    try:
        codes, lastis = eqn.source_info.traceback.raw_frames()
        for code, lasti in zip(codes, lastis):
            if os.path.realpath(code.co_filename) == model_file:
                positions = list(code.co_positions())
                line, end_line = positions[lasti // 2][:2] if lasti // 2 < len(positions) else (None, None)
                if line is None:
                    line = end_line = code.co_firstlineno
                return {"line": line, "endLine": max(end_line or line, line)}
    except Exception:  # noqa: BLE001 - traceback internals vary between jax versions
        return None
    return None
