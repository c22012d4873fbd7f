"""Walk a traced jaxpr once, in equation order: draw it and run it.

Every equation becomes an op node under the container its name stack points at
(modules, function groups and plain ``jax.named_scope`` scopes, see :mod:`.hook`).
Nested calls are walked in place: a ``jit`` of a named function is a function group, one
of a single primitive is one op named after the function (``relu``). A ``scan`` is a
container marked with its length, holding its body drawn once. Closed-over arrays become
``Parameter`` nodes named by the library (``layers.0.kernel``) when their identity is known.

The walk also *evaluates* each equation eagerly (``primitive.bind``), so checkpoint values
come from the very graph that is drawn, under ``jit``, ``vmap`` or ``grad`` alike; inside a
scan body the first iteration is evaluated for its values while the scan itself runs whole.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .....core.ids import op_id
from .hook import PREFIX, ScopeHook
from .jaxpr import (
    NAMED_CALLS,
    call_name,
    called_jaxpr,
    count_ops,
    definition_of,
    describe,
    eqn_params,
    evaluate,
    has_scopes,
    inner_jaxpr,
    is_backward,
    is_literal,
    literal_value,
    scope_names,
    source_line,
)
from .names import owner_of
from .scans import move_into_scan

#: Named scopes opened by the libraries themselves (Equinox layers), not by the model's author.
_LIBRARY_SCOPES = ("eqx.", "equinox.")
#: Scope names no author writes: ``jnp.einsum`` opens one named after its spec (``BTNH,BSNH->BNTS``).
_LIBRARY_SCOPE_TEXT = re.compile(r"[^\w.\-\[\]]")


class Builder:
    """Accumulates nodes, edges and values while walking a jaxpr; see the module docstring."""

    def __init__(self, model_file: str, hook: ScopeHook, names: dict[int, tuple[str, str]],
                 checkpoints: Sequence[str]) -> None:
        self.model_file = os.path.realpath(model_file)
        self.hook = hook
        self.names = names
        self.checkpoints = set(checkpoints)
        self.nodes: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.edges: list[dict[str, Any]] = []
        self.edge_keys: set[tuple[str, str]] = set()
        self.env: dict[Any, str] = {}  # jaxpr Var -> producing node id
        self.values: dict[Any, Any] = {}  # jaxpr Var -> its value (a tracer of the evaluating jax.jit)
        self.constants: set[Any] = set()
        self.counters: Counter[tuple[str, str | None]] = Counter()
        self.groups: dict[tuple[Any, ...], str] = {}  # (instance, key) -> container id
        self.instances = 0
        self.activations: dict[str, Any] = {}
        self.library_groups: set[str] = set()
        self.backward = False  # the equation being walked belongs to a gradient's backward pass
        self.op_values: dict[str, Any] = {}  # op node id -> its first output
        # the model-file line of the call being walked: ops traced away from the model file (inside a
        # library's jitted helper, a custom_jvp such as nnx.relu) point at the author's call instead
        self.call_site: dict[str, int] | None = None

    # -- walking ---------------------------------------------------------------------------
    def walk(self, jaxpr: Any, base: str | None, instance: int) -> None:
        """Draw and evaluate ``jaxpr``'s equations under container ``base``; ``instance`` tells
        two walks of the same nested jaxpr (a function called twice) apart."""
        sole = instance == 0 and len(jaxpr.eqns) == 1  # the user's own jax.jit(forward)
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "debug_callback":
                continue
            parent = self._resolve(eqn, base, instance)
            self.backward = is_backward(eqn)
            sub = called_jaxpr(eqn)
            if sub is not None and (has_scopes(sub) or count_ops(sub) > 1 or eqn.primitive.name not in NAMED_CALLS):
                if eqn.primitive.name in NAMED_CALLS and not sole:
                    parent = self._jit_group(eqn, sub, parent)
                self._inline(eqn, sub, parent)
            elif eqn.primitive.name == "scan":
                self._scan(eqn, parent)
            else:
                self._op(eqn, parent, sub)

    def _op(self, eqn: Any, parent: str | None, sub: Any) -> None:
        op = call_name(eqn, sub) if sub is not None else eqn.primitive.name
        params = {"call": eqn.primitive.name} if sub is not None else eqn_params(eqn.params)
        node_id = self._new_id(op, parent)
        sources = self.producers(eqn.invars, parent)
        self.add_node(node_id, op, "layer", parent, params, self._source(eqn), [describe(var) for var in eqn.outvars])
        self.connect(sources, node_id)
        outputs = evaluate(eqn, self.values_of(eqn.invars))
        for var, value in zip(eqn.outvars, outputs):
            self.env[var] = node_id
            self.values[var] = value
        if outputs:
            self.op_values[node_id] = outputs[0]

    def _inline(self, eqn: Any, sub: Any, parent: str | None) -> None:
        """Walk a nested call's equations as if they were written in place."""
        inner = inner_jaxpr(sub)
        self._bind(inner.invars, eqn.invars, parent)
        self.add_consts(inner.constvars, getattr(sub, "consts", ()))
        self.instances += 1
        self._walk_called(eqn, inner, parent)
        self._export(inner.outvars, eqn.outvars)

    def _walk_called(self, eqn: Any, inner: Any, container: str | None) -> None:
        """Walk a called jaxpr with ``eqn``'s line (or the enclosing call's) as its ops' fallback."""
        outer, self.call_site = self.call_site, self._source(eqn)
        try:
            self.walk(inner, container, self.instances)
        finally:
            self.call_site = outer

    def _source(self, eqn: Any) -> dict[str, int] | None:
        return source_line(eqn, self.model_file) or self.call_site

    def _scan(self, eqn: Any, parent: str | None) -> None:
        """A scan as a container ``scan x N`` holding its body once (first iteration's values)."""
        length = int(eqn.params.get("length", 0))
        node_id = self._unique(f"{parent}.scan" if parent else "scan")
        self.add_node(node_id, "scan", "module", parent, {"length": length}, self._source(eqn),
                      None, group="scan", label=f"scan x {length}")
        body = eqn.params["jaxpr"]
        inner = inner_jaxpr(body)
        self._bind(inner.invars, eqn.invars, node_id)
        first = eqn.params.get("num_consts", 0) + eqn.params.get("num_carry", 0)  # then the scanned xs
        index = -1 if eqn.params.get("reverse") else 0
        for position, var in enumerate(inner.invars[first:], start=first):
            outer = eqn.invars[position]
            if outer in self.values and length:
                self.values[var] = self.values[outer][index]
        self.add_consts(inner.constvars, getattr(body, "consts", ()))
        self.instances += 1
        self._walk_called(eqn, inner, node_id)
        self._export(inner.outvars, eqn.outvars, values=False)
        for var, value in zip(eqn.outvars, evaluate(eqn, self.values_of(eqn.invars))):
            self.values[var] = value

    # -- containers --------------------------------------------------------------------------
    def _resolve(self, eqn: Any, base: str | None, instance: int) -> str | None:
        """The container of an equation: its name-stack scopes resolved under ``base``."""
        current = base
        for name in scope_names(eqn):
            if name.startswith(f"{PREFIX}m:"):
                current = self._module(name[len(PREFIX) + 2:], current)
            elif name.startswith((f"{PREFIX}f:", f"{PREFIX}l:")):
                serial = int(name.rpartition(":")[2])
                if serial in self.hook.calls and serial not in self.hook.dissolved:
                    current = self._function(serial, current, instance)
            elif not name.startswith(_LIBRARY_SCOPES) and not _LIBRARY_SCOPE_TEXT.search(name):
                for part in (p for p in name.split(".") if p):
                    current = self._scope(part, current)
        return current

    def _module(self, path: str, parent: str | None) -> str | None:
        if path in self.ancestors(parent):
            return parent  # the module's own body inside a container it opened (a Linen nn.scan)
        node = self.by_id.get(path)
        if node is None or node["kind"] != "module":
            self.add_node(path, self.hook.classes.get(path, "Module"), "module", parent, {},
                          self.hook.module_sites.get(path), None)
        else:
            move_into_scan(self, node, parent)
        return path

    def _scope(self, part: str, parent: str | None) -> str:
        node_id = f"{parent}.{part}" if parent else part
        if node_id not in self.by_id:
            self.add_node(node_id, "Module", "module", parent, {}, None, None)
        return node_id

    def _function(self, serial: int, parent: str | None, instance: int) -> str:
        info = self.hook.calls[serial]
        key = (instance, serial)
        if key not in self.groups:
            if self.by_id.get(parent or "", {}).get("group") == "function" and \
                    self.by_id[parent or ""]["op"] == info.name:
                return parent  # type: ignore[return-value]  # jax.jit of the same function
            extra = {"definedAt": info.definition} if info.definition else {}
            self.groups[key] = self._group_node(info.name, parent, info.call_site, extra)
            if info.library:
                self.library_groups.add(self.groups[key])
        return self.groups[key]

    def _jit_group(self, eqn: Any, sub: Any, parent: str | None) -> str | None:
        name = eqn.params.get("name")
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            return parent  # a lambda, or a library's private helper (jnp's _where)
        if self.by_id.get(parent or "", {}).get("group") == "function" and self.by_id[parent or ""]["op"] == name:
            return parent  # the hook already opened this function's group
        extra: dict[str, Any] = {"params": {"call": "jit"}}
        defined = definition_of(sub, name)
        if defined is not None:
            extra["definedAt"] = defined
        return self._group_node(name, parent, self._source(eqn), extra)

    def _group_node(self, name: str, parent: str | None, source: dict[str, int] | None,
                    extra: dict[str, Any]) -> str:
        node_id = self._unique(f"{parent}.{name}" if parent else name)
        params = extra.pop("params", {})
        self.add_node(node_id, name, "module", parent, params, source, None, group="function", **extra)
        return node_id

    # -- variables -----------------------------------------------------------------------------
    def _bind(self, inner_vars: list[Any], outer_vars: list[Any], parent: str | None) -> None:
        for inner_var, outer_var in zip(inner_vars, outer_vars):
            if is_literal(outer_var):
                self.values[inner_var] = literal_value(outer_var)
                continue
            self.producers([outer_var], parent)  # materialise constants
            if outer_var in self.env:
                self.env[inner_var] = self.env[outer_var]
            if outer_var in self.values:
                self.values[inner_var] = self.values[outer_var]

    def _export(self, inner_vars: list[Any], outer_vars: list[Any], values: bool = True) -> None:
        for inner_var, outer_var in zip(inner_vars, outer_vars):
            if is_literal(inner_var):
                if values:
                    self.values[outer_var] = literal_value(inner_var)
                continue
            if inner_var in self.env:
                self.env[outer_var] = self.env[inner_var]
            if values and inner_var in self.values:
                self.values[outer_var] = self.values[inner_var]

    def add_consts(self, constvars: list[Any], consts: Sequence[Any]) -> None:
        self.constants.update(constvars)
        for var, value in zip(constvars, consts):
            self.values[var] = value

    def values_of(self, variables: list[Any]) -> list[Any]:
        return [literal_value(var) if is_literal(var) else self.values[var] for var in variables]

    def producers(self, variables: list[Any], parent: str | None = None) -> list[str]:
        """Producer ids of jaxpr variables; closed-over constants get a node on first use."""
        found: list[str] = []
        for var in variables:
            if is_literal(var):
                continue
            if var not in self.env and var in self.constants:
                self.env[var] = self._constant_node(var, parent)
            producer = self.env.get(var)
            if producer is not None:
                self._note_export(producer, parent, var)
                if producer not in found:
                    found.append(producer)
        return found

    def _constant_node(self, var: Any, parent: str | None) -> str:
        named = self.names.get(id(self.values.get(var)))
        if named is None:
            node_id = self._new_id("constant", parent)
            self.add_node(node_id, "Constant", "layer", parent, {}, None, [describe(var)])
            return node_id
        name, kind = named
        if name not in self.by_id:
            # in its module; a plain array (a closed-over ``w_up``) where it is first used
            home = self._enclosing_module(owner_of(name))
            if home is None:
                home = next((c for c in self.ancestors(parent) if "group" not in self.by_id[c]), None)
            self.add_node(name, kind, "layer", home, {}, None, [describe(var)])
        return name

    def _enclosing_module(self, path: str) -> str | None:
        while path:
            node = self.by_id.get(path)
            if node is not None and node["kind"] == "module":
                return path
            path = owner_of(path)
        return None

    def _note_export(self, producer: str, consumer_parent: str | None, var: Any) -> None:
        """A value leaving a checkpointed container is (the latest) output of that container."""
        if not self.checkpoints or self.backward or var not in self.values:
            return
        inside = set(self.ancestors(consumer_parent))
        for container in self.ancestors(self.by_id[producer]["parent"]):
            if container in inside:
                break
            if container in self.checkpoints:
                self.activations[container] = self.values[var]

    def ancestors(self, node_id: str | None) -> list[str]:
        chain = []
        while node_id is not None:
            chain.append(node_id)
            node_id = self.by_id[node_id]["parent"]
        return chain

    # -- finishing ---------------------------------------------------------------------------------
    def finish(self, sizes: dict[str, int]) -> None:
        """Drop library groups around a single op (``jnp.dot`` is just its ``dot_general``) and
        count each module's parameters, as ``numel`` sums do for PyTorch."""
        children: dict[str | None, list[dict[str, Any]]] = {}
        for node in self.nodes:
            children.setdefault(node["parent"], []).append(node)
        renamed: dict[str, str] = {}
        for group in [node["id"] for node in self.nodes if node["id"] in self.library_groups]:
            inside = children.get(group, [])
            if len(inside) == 1 and inside[0]["kind"] != "module":
                op, removed = inside[0], self.by_id.pop(group)
                self.nodes.remove(removed)
                renamed[op["id"]] = self._new_id(op["op"], removed["parent"])
                op.update(id=renamed[op["id"]], label=renamed[op["id"]], parent=removed["parent"])
                if "source" not in op and "source" in removed:
                    op["source"] = removed["source"]  # the user's call of the library function
        for node in self.nodes:  # weights first used outside their module (a scan's stacked layers)
            if node["op"] in ("Parameter", "Buffer"):
                node["parent"] = self._enclosing_module(owner_of(node["id"])) or node["parent"]
        for edge in self.edges:
            edge["source"] = renamed.get(edge["source"], edge["source"])
            edge["target"] = renamed.get(edge["target"], edge["target"])
        self.by_id = {node["id"]: node for node in self.nodes}
        self.nodes = _parents_first(self.nodes)
        for old, value in self.op_values.items():
            if renamed.get(old, old) in self.checkpoints:
                self.activations[renamed.get(old, old)] = value
        for node in self.nodes:
            if node["kind"] == "module" and "group" not in node:
                path = node["id"]
                count = sum(size for name, size in sizes.items() if name.startswith((f"{path}.", f"{path}[")))
                if count:
                    node["params"]["parameters"] = count

    # -- nodes and edges --------------------------------------------------------------------------
    def _unique(self, wanted: str) -> str:
        """``wanted``, or ``wanted:1``, ``wanted:2``... when a node already has that id (the
        PyTorch capture's spelling of a second call)."""
        node_id, count = wanted, 1
        while node_id in self.by_id:
            node_id, count = f"{wanted}:{count}", count + 1
        return node_id

    def _new_id(self, op: str, parent: str | None) -> str:
        """``<module>.<op>_<n>``, as :func:`..graph_ids.op_id` spells every backend's op ids."""
        count = self.counters[(op, parent)]
        self.counters[(op, parent)] += 1
        return op_id(op, parent, count)

    def add_node(self, node_id: str, op: str, kind: str, parent: str | None, params: dict[str, Any],
                 source: dict[str, int] | None, outputs: list[dict[str, Any]] | None, *,
                 label: str | None = None, **extra: Any) -> None:
        node: dict[str, Any] = {"id": node_id, "label": label or node_id, "op": op, "kind": kind,
                                "parent": parent, "params": params}
        node.update(extra)
        if source is not None:
            node["source"] = source
        if outputs is not None:
            node["outputs"] = outputs
        self.nodes.append(node)
        self.by_id[node_id] = node

    def connect(self, sources: list[str], target: str) -> None:
        for source in sources:
            if (source, target) not in self.edge_keys and source != target:
                self.edge_keys.add((source, target))
                self.edges.append({"id": f"edge-{len(self.edges) + 1}", "source": source, "target": target,
                                   "sourcePort": None, "targetPort": None})


def _parents_first(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The nodes in their order, except that a container always comes before what it holds."""
    placed: set[str] = set()
    ordered: list[dict[str, Any]] = []
    by_id = {node["id"]: node for node in nodes}

    def place(node: dict[str, Any]) -> None:
        if node["id"] in placed:
            return
        if node["parent"] is not None and node["parent"] in by_id:
            place(by_id[node["parent"]])
        placed.add(node["id"])
        ordered.append(node)

    for node in nodes:
        place(node)
    return ordered
