"""Record one PyTorch forward pass as a graph of modules, layers and ops.

Why this design (see the "Capturing and drawing model graphs" notes): ``torch.fx``
fails on data-dependent control flow and has no shapes, and ``torch.export`` lowers
everything to aten ops that learners never wrote. Instead we run the model once,
for real, and watch it:

* a :class:`~torch.overrides.TorchFunctionMode` sees every Python-level torch call
  (``torch.mul``, ``x @ y``, ``x.flatten(-2)``, ``torch.arange``...);
* forward pre/post hooks on every submodule keep a stack of the modules that are
  running, which gives each op its ``parent`` and lets us treat ``torch.nn`` layers
  (``nn.Linear``, ``nn.SiLU``...) as single leaf nodes whose insides are not recorded;
* edges follow tensor identity: each recorded tensor remembers the node that
  produced it (the tensors are kept alive so ``id()`` values are never reused);
* source lines come from the file that defines each piece (:mod:`.sources`): the
  ``self.x = ...`` assignment in ``__init__`` for layers, modules and parameters, and
  the calling frame's ``co_positions()`` for ops, in the author's files or a library's;
* helper functions between an op and its module's ``forward`` become function groups
  (:mod:`.groups`), and whatever the model returns is named (:mod:`.outputs`).

Only the branch that actually ran is recorded; pages should say so.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode, resolve_name

from ....core.ids import canonical, op_id
from . import compiled
from .groups import FunctionGroups, display_name, forward_codes
from .no_ops import changed_outputs, versions_of
from .outputs import exposed_summary, name_outputs, tensors_in
from .sources import SourceIndex
from .torch_modules import ModuleTable, is_torch_leaf
from .torch_params import (
    ATTENTION_OPS,
    describe,
    gqa_note,
    layer_params,
    op_name,
    op_params,
)

__all__ = ["capture_torch_graph"]


def capture_torch_graph(
    model: nn.Module,
    args: tuple,
    model_file: str,
    *,
    kwargs: dict[str, Any] | None = None,
    checkpoints: Sequence[str] = (),
    srcdir: str | None = None,
) -> dict[str, Any]:
    """Run ``model(*args, **kwargs)`` once under ``torch.no_grad()`` and record its graph.

    The caller has already seeded and put the model in eval mode. Returns
    ``{"graph": {"layers", "connections", "sources", "outputs"}, "output": <first output
    tensor>, "raw": <what the model returned>, "activations": {node_id: tensor}}`` where
    ``activations`` holds a detached copy of the (first) output of each node named in
    ``checkpoints`` (what each one is, :mod:`..layout_hints` reads off the graph). ``srcdir``
    (the course folder) decides which files are the author's; it defaults to the model file's folder.

    Raises ``ValueError`` if a checkpoint names no node that produced a tensor, so a
    typo in a lesson fails loudly instead of drawing an empty panel; the message says why
    (:meth:`.ModuleTable.checkpoint_problem`).
    """
    kwargs = dict(kwargs or {})
    checkpoints = [canonical(name) for name in checkpoints]
    compiled_model = compiled.is_compiled_module(model)
    model = compiled.unwrap(model)
    recorder = _Recorder(model, SourceIndex(model_file, srcdir), checkpoints)
    handles = []
    try:
        for name, module in recorder.modules.items():  # compiled wrappers left out: they only forward
            if name:  # the root model is the page itself, not a node
                handles.append(module.register_forward_pre_hook(recorder.pre_hook, with_kwargs=True))
                handles.append(module.register_forward_hook(recorder.post_hook, with_kwargs=True))
        recorder.add_inputs(args, kwargs)
        with torch.no_grad(), compiled.eager(), recorder:
            raw = model(*args, **kwargs)
        outputs = recorder.add_outputs(raw)
    finally:
        for handle in handles:
            handle.remove()
        recorder.groups.release()
    missing = [name for name in checkpoints if name not in recorder.activations]
    if missing:
        raise ValueError(recorder.table.checkpoint_problem(missing, recorder.by_id, recorder.ran, recorder.edges))
    first = next((o.tensor for o in outputs if o.tensor is not None), None)
    graph = {"layers": recorder.nodes, "connections": recorder.edges,
             "outputs": [{"name": o.name, "id": recorder.output_ids[o.name], "type": o.type_name} for o in outputs]}
    if compiled_model or recorder.compiled:
        graph["compiled"] = True
    sources = recorder.sources.files()
    if sources:
        graph["sources"] = sources
    return {
        "graph": graph,
        "output": first,
        "raw": raw,
        "activations": {name: recorder.activations[name] for name in checkpoints},
    }


@dataclass
class _Running:
    """One entry of the stack of modules whose forward is running."""

    node_id: str | None  # the module/layer node, or None when nothing is recorded for it
    leaf: bool
    first_call: bool
    forward: frozenset[CodeType] = frozenset()  # where function groups stop


class _Recorder(TorchFunctionMode):
    """Collects nodes and edges while the model runs; see the module docstring."""

    def __init__(self, model: nn.Module, sources: SourceIndex, checkpoints: Sequence[str]) -> None:
        super().__init__()
        self.sources = sources
        self.table = ModuleTable(model)
        self.modules, self.module_names, self.named_tensors = self.table.modules, self.table.names, self.table.tensors
        self.compiled = False  # whether a compiled function ran (eagerly) under the capture
        self.ran: set[str] = set()  # modules called, inside torch.nn layers too
        self.checkpoints = set(checkpoints)
        self.nodes: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.edges: list[dict[str, Any]] = []
        self.edge_index: dict[tuple[str, str], dict[str, Any]] = {}
        self.producers: dict[int, str] = {}
        self.alive: list[torch.Tensor] = []  # keeps id() values unique during the capture
        self.counters: Counter[tuple[str, str | None]] = Counter()
        self.calls: Counter[str] = Counter()
        self.root = _Running(None, False, True, forward_codes(model))
        self.stack: list[_Running] = []
        self.leaf_depth = 0
        self.paused = False
        self.activations: dict[str, torch.Tensor] = {}
        self.output_ids: dict[str, str] = {}
        self.groups = FunctionGroups(sources.key, self._add_group)

    # -- the torch function mode ------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: D105
        kwargs = kwargs or {}
        if self.paused or self.leaf_depth:
            return func(*args, **kwargs)  # our own bookkeeping, or the inside of an nn layer
        before = versions_of((args, kwargs))
        out = func(*args, **kwargs)
        name = resolve_name(func) or f"{getattr(func, '__module__', '')}.{getattr(func, '__name__', func)}"
        outputs = [args[0]] if name.endswith("__setitem__") else changed_outputs(out, before, name)
        if outputs:  # metadata calls (.shape, .dim(), .size()) and no-ops return no new tensor
            self.paused = True
            try:
                self._record_op(name, args, kwargs, outputs)
            finally:
                self.paused = False
        return out

    def _record_op(self, name: str, args: tuple, kwargs: dict, outputs: list[torch.Tensor]) -> None:
        op, short = op_name(name)
        running = next((entry for entry in reversed(self.stack) if entry.node_id), self.root)
        source, frame = self.sources.call_site(sys._getframe(2))
        if not self.compiled:
            self.compiled = compiled.runs_compiled_code(frame, running.forward)
        parent = self.groups.parent_for(frame, running.node_id, running.forward)
        sources = self._producers_of((args, kwargs), parent, source, running.node_id)
        node_id = self._new_op_id(short, running.node_id)
        params = op_params(short, args, kwargs)
        self._add_node(node_id, op, "layer", parent, params, source, outputs, label=node_id.rpartition(".")[2])
        self._connect(sources, node_id)
        if short in ATTENTION_OPS:
            self._note_shared_heads(args, kwargs, node_id, params)
        self._produce(node_id, outputs)

    def _note_shared_heads(self, args: tuple, kwargs: dict, node_id: str, params: dict[str, Any]) -> None:
        """Grouped-query attention: the key and value edges say how many heads they share."""
        note = gqa_note(params)
        if note is None:
            return
        for position, keyword in ((1, "key"), (2, "value")):
            tensor = args[position] if len(args) > position else kwargs.get(keyword)
            producer = self.producers.get(id(tensor)) if isinstance(tensor, torch.Tensor) else None
            edge = self.edge_index.get((producer, node_id)) if producer else None
            if edge is not None:
                edge["note"] = note

    # -- module hooks ---------------------------------------------------------------
    def pre_hook(self, module: nn.Module, args: tuple, kwargs: dict) -> None:
        """Push the module; create its node on the first call (a leaf: on every call)."""
        leaf = is_torch_leaf(module)
        name = self.module_names.get(id(module))
        if name is not None:
            self.ran.add(name)
        entry = _Running(None, leaf, False)
        if name is not None and not self.leaf_depth and not self.paused:
            self.paused = True
            try:
                entry = self._enter(module, name, leaf, args, kwargs)
            finally:
                self.paused = False
        self.stack.append(entry)
        self.leaf_depth += leaf

    def post_hook(self, module: nn.Module, args: tuple, kwargs: dict, output: Any) -> None:
        """Pop the module; a leaf's output now comes from its node."""
        entry = self.stack.pop()
        self.leaf_depth -= entry.leaf
        if entry.node_id is None or self.paused:
            return
        self.paused = True
        try:
            outputs = list(tensors_in(output))
            if not outputs:  # a ModelOutput or dataclass returned by a library module
                outputs = [t for named in name_outputs(output) for t in named.tensors]
            node = self.by_id[entry.node_id]
            if entry.first_call and outputs:
                node["outputs"] = [describe(t) for t in outputs]
                self._checkpoint(entry.node_id, outputs)
            if entry.leaf:
                self._produce(entry.node_id, outputs)
        finally:
            self.paused = False

    def _enter(self, module: nn.Module, name: str, leaf: bool, args: tuple, kwargs: dict) -> _Running:
        parent = self._enclosing_module(name.rpartition(".")[0])
        source = self.table.construction_site(self.sources, name)
        calls = self.calls[name]
        self.calls[name] += 1
        if not leaf:
            if not calls:
                node = self._add_node(name, "Module", "module", parent, {}, source, None)
                node["class"] = type(module).__name__
            return _Running(name, False, not calls, forward_codes(module))
        # A layer called twice gets a second node, so the graph stays acyclic.
        node_id = name if not calls else f"{name}:{calls}"
        sources = self._producers_of((args, kwargs), parent, source, parent)
        self._add_node(node_id, type(module).__name__, "layer", parent, layer_params(module), source, [])
        self._connect(sources, node_id)
        return _Running(node_id, True, True)

    # -- inputs and outputs ----------------------------------------------------------
    def add_inputs(self, args: tuple, kwargs: dict[str, Any]) -> None:
        """One ``input`` node per tensor argument: ``input``, ``input_1``... then keywords by name."""
        tensors = [arg for arg in args if isinstance(arg, torch.Tensor)]
        named = [("input" if index == 0 else f"input_{index}", tensor) for index, tensor in enumerate(tensors)]
        for key, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                named.append((key if key not in self.modules else f"input.{key}", value))
        for node_id, tensor in named:
            self._add_node(node_id, "Input", "input", None, dict(describe(tensor)), None, [tensor])
            self._produce(node_id, [tensor])

    def add_outputs(self, raw: Any) -> list[Any]:
        """One output node per named output (``output`` for a bare tensor), fed by its producers."""
        outputs = name_outputs(raw)
        for named in outputs:
            node_id = "output" if named.name == "output" else f"output.{named.name}"
            node_id = self._unique(node_id)
            self.output_ids[named.name] = node_id
            params = {} if named.tensor is not None else exposed_summary(named)
            sources = self._producers_of(named.tensors, None, None, None)
            self._add_node(node_id, "Output", "output", None, params, None,
                           [named.tensor] if named.tensor is not None else [], label=named.name)
            self._connect(sources, node_id)
        return outputs

    # -- bookkeeping ----------------------------------------------------------------
    def _add_node(
        self,
        node_id: str,
        op: str,
        kind: str,
        parent: str | None,
        params: dict[str, Any],
        source: dict[str, Any] | None,
        outputs: list[torch.Tensor] | None,
        *,
        label: str | None = None,
    ) -> dict[str, Any]:
        node: dict[str, Any] = {"id": node_id, "label": label or node_id, "op": op, "kind": kind, "parent": parent,
                                "params": params}
        if source is not None:
            node["source"] = source
        if outputs is not None:
            node["outputs"] = [describe(t) for t in outputs]
        self.nodes.append(node)
        self.by_id[node_id] = node
        if outputs:
            self._checkpoint(node_id, outputs)
        return node

    def _add_group(self, node_id: str, parent: str | None, code: CodeType) -> None:
        """A function group: drawn like a module, labelled ``DynamicCache.update()``, ``repeat_kv()_1``."""
        suffix = node_id.rpartition("()")[2]
        function = display_name(code)
        node = self._add_node(node_id, "Function", "module", parent, {}, self.sources.function_site(code), None,
                              label=f"{function}(){suffix}")
        node["group"] = "function"
        node["function"] = function

    def _produce(self, node_id: str, outputs: list[torch.Tensor]) -> None:
        for tensor in outputs:
            self.producers[id(tensor)] = node_id
            self.alive.append(tensor)

    def _connect(self, sources: list[str], target: str) -> None:
        for source in sources:
            if (source, target) not in self.edge_index and source != target:
                edge = {"id": f"edge-{len(self.edges) + 1}", "source": source, "target": target,
                        "sourcePort": None, "targetPort": None}
                self.edge_index[(source, target)] = edge
                self.edges.append(edge)

    def _producers_of(self, value: Any, parent: str | None, source: dict[str, Any] | None,
                      module: str | None) -> list[str]:
        """Producer node ids of the tensors in ``value``; unknown tensors get a node first."""
        found: list[str] = []
        for tensor in tensors_in(value):
            producer = self.producers.get(id(tensor))
            if producer is None:
                producer = self._source_node(tensor, parent, source, module)
            if producer not in found:
                found.append(producer)
        return found

    def _source_node(self, tensor: torch.Tensor, parent: str | None, source: dict[str, Any] | None,
                     module: str | None) -> str:
        """A node for a tensor nobody recorded: a parameter/buffer, or a plain Python value."""
        named = self.named_tensors.get(id(tensor))
        if named is not None:
            name, op = named
            owner = name.rpartition(".")[0]
            node_id = name
            self._add_node(name, op, "layer", self._enclosing_module(owner), {},
                           self.table.construction_site(self.sources, name), [tensor])
        else:
            node_id = self._new_op_id("python", module)
            self._add_node(node_id, "Python", "layer", parent, {}, source, [tensor],
                           label=node_id.rpartition(".")[2])
        self._produce(node_id, [tensor])
        return node_id

    def _new_op_id(self, short: str, module: str | None) -> str:
        count = self.counters[(short, module)]
        self.counters[(short, module)] += 1
        return self._unique(op_id(short, module, count))

    def _unique(self, node_id: str) -> str:
        """``node_id``, or ``node_id:<n>`` when a module of the model already has that name."""
        candidate, n = node_id, 1
        while candidate in self.by_id or candidate in self.modules:
            candidate, n = f"{node_id}:{n}", n + 1
        return candidate

    def _checkpoint(self, node_id: str, outputs: list[torch.Tensor]) -> None:
        if node_id in self.checkpoints and node_id not in self.activations:
            self.activations[node_id] = outputs[0].detach().clone()

    def _enclosing_module(self, name: str) -> str | None:
        """The nearest recorded *module* node at or above the dotted ``name``."""
        while name:
            node = self.by_id.get(name)
            if node is not None and node["kind"] == "module":
                return name
            name = name.rpartition(".")[0]
        return None
