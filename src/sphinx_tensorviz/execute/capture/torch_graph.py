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
* source lines come from the model file itself: the ``self.x = ...`` assignment in
  ``__init__`` for layers, modules and parameters (found with :mod:`ast`), and the
  calling frame's ``co_positions()`` for ops.

Only the branch that actually ran is recorded; pages should say so.
"""

from __future__ import annotations

import ast
import math
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode, resolve_name

__all__ = ["capture_torch_graph"]

#: torch.nn classes that only group other modules: drawn as modules, not leaves.
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)

#: Constructor attributes worth showing for a torch.nn layer, in display order.
_LAYER_ATTRS = (
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "stride",
    "padding", "dilation", "groups", "bias", "num_embeddings", "embedding_dim", "padding_idx",
    "normalized_shape", "num_features", "num_groups", "eps", "momentum", "affine",
    "elementwise_affine", "embed_dim", "num_heads", "batch_first", "input_size", "hidden_size",
    "num_layers", "dim", "start_dim", "end_dim", "approximate", "negative_slope", "p",
    "alpha", "beta", "threshold", "scale_factor", "mode", "size", "output_size",
)

#: Tensor arithmetic (method or Python operator) drawn as the torch function it is.
_ARITHMETIC = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add", "add": "add",
    "__sub__": "sub", "__rsub__": "sub", "__isub__": "sub", "sub": "sub", "rsub": "sub",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul", "mul": "mul",
    "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div", "div": "div",
    "true_divide": "div",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "matmul": "matmul",
    "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow", "pow": "pow",
    "__neg__": "neg", "neg": "neg",
}

#: Argument names of a few ops whose settings matter to a reader (position 0 is the input).
_OP_ARGS = {
    "stack": ("tensors", "dim"), "cat": ("tensors", "dim"), "concat": ("tensors", "dim"),
    "flatten": ("input", "start_dim", "end_dim"), "transpose": ("input", "dim0", "dim1"),
    "softmax": ("input", "dim"), "log_softmax": ("input", "dim"),
    "mean": ("input", "dim", "keepdim"), "sum": ("input", "dim", "keepdim"),
    "unsqueeze": ("input", "dim"), "squeeze": ("input", "dim"),
    "chunk": ("input", "chunks", "dim"), "split": ("input", "split_size_or_sections", "dim"),
    "triu": ("input", "diagonal"), "tril": ("input", "diagonal"),
}


def capture_torch_graph(
    model: nn.Module,
    args: tuple,
    model_file: str,
    *,
    checkpoints: Sequence[str] = (),
) -> dict[str, Any]:
    """Run ``model(*args)`` once under ``torch.no_grad()`` and record its graph.

    The caller has already seeded and put the model in eval mode. Returns
    ``{"graph": {"layers": [...], "connections": [...]}, "output": <model output>,
    "activations": {node_id: tensor}}`` where ``activations`` holds a detached copy
    of the (first) output of each node named in ``checkpoints``.

    Raises ``ValueError`` if a checkpoint names no node that produced a tensor, so a
    typo in a lesson fails loudly instead of drawing an empty panel.
    """
    recorder = _Recorder(model, model_file, checkpoints)
    handles = []
    try:
        for name, module in model.named_modules():
            if name:  # the root model is the page itself, not a node
                handles.append(module.register_forward_pre_hook(recorder.pre_hook, with_kwargs=True))
                handles.append(module.register_forward_hook(recorder.post_hook, with_kwargs=True))
        recorder.add_inputs(args)
        with torch.no_grad(), recorder:
            output = model(*args)
        recorder.add_output(output)
    finally:
        for handle in handles:
            handle.remove()
    missing = [name for name in checkpoints if name not in recorder.activations]
    if missing:
        raise ValueError(f"checkpoints produced no tensor: {', '.join(missing)}")
    return {
        "graph": {"layers": recorder.nodes, "connections": recorder.edges},
        "output": output,
        "activations": {name: recorder.activations[name] for name in checkpoints},
    }


@dataclass
class _Running:
    """One entry of the stack of modules whose forward is running."""

    node_id: str | None  # the module/layer node, or None when nothing is recorded for it
    leaf: bool
    first_call: bool


class _Recorder(TorchFunctionMode):
    """Collects nodes and edges while the model runs; see the module docstring."""

    def __init__(self, model: nn.Module, model_file: str, checkpoints: Sequence[str]) -> None:
        super().__init__()
        self.model_file = os.path.realpath(model_file)
        self.modules = dict(model.named_modules())
        self.module_names = {id(m): name for name, m in self.modules.items() if name}
        self.named_tensors: dict[int, tuple[str, str]] = {}
        for name, buffer in model.named_buffers():
            self.named_tensors[id(buffer)] = (name, "Buffer")
        for name, param in model.named_parameters():
            self.named_tensors[id(param)] = (name, "Parameter")
        self.checkpoints = set(checkpoints)
        self.assignments = _AssignmentIndex(self.model_file)
        self.nodes: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.edges: list[dict[str, Any]] = []
        self.edge_keys: set[tuple[str, str]] = set()
        self.producers: dict[int, str] = {}
        self.alive: list[torch.Tensor] = []  # keeps id() values unique during the capture
        self.counters: Counter[tuple[str, str | None]] = Counter()
        self.calls: Counter[str] = Counter()
        self.stack: list[_Running] = []
        self.leaf_depth = 0
        self.paused = False
        self.activations: dict[str, torch.Tensor] = {}
        self.positions: dict[CodeType, list] = {}
        self.in_model_file: dict[str, bool] = {}

    # -- the torch function mode ------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: D105
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.paused or self.leaf_depth:
            return out  # our own bookkeeping, or the inside of an nn layer
        name = resolve_name(func) or f"{getattr(func, '__module__', '')}.{getattr(func, '__name__', func)}"
        outputs = [args[0]] if name.endswith("__setitem__") else list(_tensors(out))
        if outputs:  # metadata calls (.shape, .dim(), .size()) return no tensor
            self.paused = True
            try:
                self._record_op(name, args, kwargs, outputs)
            finally:
                self.paused = False
        return out

    def _record_op(self, name: str, args: tuple, kwargs: dict, outputs: list[torch.Tensor]) -> None:
        op, short = _op_name(name)
        parent = next((entry.node_id for entry in reversed(self.stack) if entry.node_id), None)
        source = self._call_site()
        sources = self._producers_of((args, kwargs), parent, source)
        node_id = self._new_op_id(short, parent)
        self._add_node(node_id, op, "layer", parent, _op_params(short, args, kwargs), source, outputs)
        self._connect(sources, node_id)
        self._produce(node_id, outputs)

    # -- module hooks ---------------------------------------------------------------
    def pre_hook(self, module: nn.Module, args: tuple, kwargs: dict) -> None:
        """Push the module; create its node on the first call (a leaf: on every call)."""
        leaf = _is_torch_leaf(module)
        name = self.module_names.get(id(module))
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
            outputs = list(_tensors(output))
            node = self.by_id[entry.node_id]
            if entry.first_call and outputs:
                node["outputs"] = [_describe(t) for t in outputs]
                self._checkpoint(entry.node_id, outputs)
            if entry.leaf:
                self._produce(entry.node_id, outputs)
        finally:
            self.paused = False

    def _enter(self, module: nn.Module, name: str, leaf: bool, args: tuple, kwargs: dict) -> _Running:
        parent = self._enclosing_module(name.rpartition(".")[0])
        source = self._construction_site(name)
        calls = self.calls[name]
        self.calls[name] += 1
        if not leaf:
            if not calls:
                self._add_node(name, "Module", "module", parent, {}, source, None)
            return _Running(name, False, not calls)
        # A layer called twice gets a second node, so the graph stays acyclic.
        node_id = name if not calls else f"{name}#{calls}"
        sources = self._producers_of((args, kwargs), parent, source)
        self._add_node(node_id, type(module).__name__, "layer", parent, _layer_params(module), source, [])
        self._connect(sources, node_id)
        return _Running(node_id, True, True)

    # -- inputs and output ----------------------------------------------------------
    def add_inputs(self, args: tuple) -> None:
        """One ``input`` node per positional tensor argument: ``input``, ``input_1``, ..."""
        tensors = [arg for arg in args if isinstance(arg, torch.Tensor)]
        for index, tensor in enumerate(tensors):
            node_id = "input" if index == 0 else f"input_{index}"
            described = _describe(tensor)
            self._add_node(node_id, "Input", "input", None, dict(described), None, [tensor])
            self._produce(node_id, [tensor])

    def add_output(self, output: Any) -> None:
        """The ``output`` node, fed by whatever produced each returned tensor."""
        outputs = list(_tensors(output))
        sources = self._producers_of(output, None, None)
        self._add_node("output", "Output", "output", None, {}, None, outputs)
        self._connect(sources, "output")

    # -- bookkeeping ----------------------------------------------------------------
    def _add_node(
        self,
        node_id: str,
        op: str,
        kind: str,
        parent: str | None,
        params: dict[str, Any],
        source: dict[str, int] | None,
        outputs: list[torch.Tensor] | None,
    ) -> None:
        node: dict[str, Any] = {"id": node_id, "label": node_id, "op": op, "kind": kind, "parent": parent,
                                "params": params}
        if source is not None:
            node["source"] = source
        if outputs is not None:
            node["outputs"] = [_describe(t) for t in outputs]
        self.nodes.append(node)
        self.by_id[node_id] = node
        if outputs:
            self._checkpoint(node_id, outputs)

    def _produce(self, node_id: str, outputs: list[torch.Tensor]) -> None:
        for tensor in outputs:
            self.producers[id(tensor)] = node_id
            self.alive.append(tensor)

    def _connect(self, sources: list[str], target: str) -> None:
        for source in sources:
            if (source, target) not in self.edge_keys and source != target:
                self.edge_keys.add((source, target))
                self.edges.append({"id": f"edge-{len(self.edges) + 1}", "source": source, "target": target,
                                   "sourcePort": None, "targetPort": None})

    def _producers_of(self, value: Any, parent: str | None, source: dict[str, int] | None) -> list[str]:
        """Producer node ids of the tensors in ``value``; unknown tensors get a node first."""
        found: list[str] = []
        for tensor in _tensors(value):
            producer = self.producers.get(id(tensor))
            if producer is None:
                producer = self._source_node(tensor, parent, source)
            if producer not in found:
                found.append(producer)
        return found

    def _source_node(self, tensor: torch.Tensor, parent: str | None, source: dict[str, int] | None) -> str:
        """A node for a tensor nobody recorded: a parameter/buffer, or a plain Python value."""
        named = self.named_tensors.get(id(tensor))
        if named is not None:
            name, op = named
            owner = name.rpartition(".")[0]
            node_id = name
            self._add_node(name, op, "layer", self._enclosing_module(owner), {},
                           self._construction_site(name), [tensor])
        else:
            node_id = self._new_op_id("python", parent)
            self._add_node(node_id, "Python", "layer", parent, {}, source, [tensor])
        self._produce(node_id, [tensor])
        return node_id

    def _new_op_id(self, short: str, parent: str | None) -> str:
        count = self.counters[(short, parent)]
        self.counters[(short, parent)] += 1
        return f"{short}@{parent or 'root'}#{count}"

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

    # -- source lines ---------------------------------------------------------------
    def _construction_site(self, name: str) -> dict[str, int] | None:
        """Lines of ``self.<attr> = ...`` that built ``name`` (a module, parameter or buffer).

        Children of containers (``layers.0``) point at the container's assignment.
        """
        parts = name.split(".")
        for cut in range(len(parts) - 1, -1, -1):
            owner = self.modules.get(".".join(parts[:cut]))
            if owner is None:
                return None
            span = self.assignments.find(owner, parts[cut])
            if span is not None:
                return {"line": span[0], "endLine": span[1]}
            if not isinstance(owner, _CONTAINERS):
                return None  # e.g. register_buffer(): no assignment line to show
        return None

    def _call_site(self) -> dict[str, int] | None:
        """Lines of the innermost call in the model file that led to the current op."""
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            inside = self.in_model_file.get(code.co_filename)
            if inside is None:
                inside = os.path.realpath(code.co_filename) == self.model_file
                self.in_model_file[code.co_filename] = inside
            if inside:
                positions = self.positions.get(code)
                if positions is None:
                    positions = self.positions[code] = list(code.co_positions())
                index = frame.f_lasti // 2
                line, end_line = positions[index][:2] if index < len(positions) else (None, None)
                line = line or frame.f_lineno
                return {"line": line, "endLine": max(end_line or line, line)}
            frame = frame.f_back
        return None


class _AssignmentIndex:
    """``self.<attr> = ...`` spans inside every ``__init__`` of the model file.

    Modules are already built when we capture, so we cannot watch the assignment
    happen; reading the file is the reliable way to point at the construction line.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.by_first_line: dict[int, dict[str, tuple[int, int]]] = {}
        try:
            with open(path, encoding="utf-8") as handle:
                tree = ast.parse(handle.read(), filename=path)
        except (OSError, SyntaxError, ValueError):
            return
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__":
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self_name = node.args.args[0].arg if node.args.args else "self"
                self.by_first_line[first] = _self_assignments(node, self_name)

    def find(self, owner: nn.Module, attr: str) -> tuple[int, int] | None:
        """Where ``owner``'s class (or a base defined in the file) assigns ``self.<attr>``."""
        for cls in type(owner).__mro__:
            code = getattr(cls.__dict__.get("__init__"), "__code__", None)
            if code is not None and os.path.realpath(code.co_filename) == self.path:
                span = self.by_first_line.get(code.co_firstlineno, {}).get(attr)
                if span is not None:
                    return span
        return None


def _self_assignments(function: ast.AST, self_name: str) -> dict[str, tuple[int, int]]:
    spans: dict[str, tuple[int, int]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        else:
            continue
        for target in targets:
            elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
            for element in elements:
                if (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                        and element.value.id == self_name and element.attr not in spans):
                    spans[element.attr] = (node.lineno, node.end_lineno or node.lineno)
    return spans


# -- small pure helpers -----------------------------------------------------------------
def _tensors(value: Any) -> Iterator[torch.Tensor]:
    """Tensors inside nested tuples/lists/dicts, in a deterministic order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _describe(tensor: torch.Tensor) -> dict[str, Any]:
    return {"shape": list(tensor.shape), "dtype": str(tensor.dtype).removeprefix("torch.")}


def _is_torch_leaf(module: nn.Module) -> bool:
    """A layer from the torch.nn package (drawn as one node), not a container."""
    return type(module).__module__.startswith("torch.nn.") and not isinstance(module, _CONTAINERS)


def _op_name(resolved: str) -> tuple[str, str]:
    """(op, short) for a resolved torch name, e.g. ``torch.Tensor.__mul__`` -> ``("torch.mul", "mul")``."""
    name = resolved.removesuffix(".__get__")  # property reads such as ``x.T``
    base = name.rpartition(".")[2]
    is_method = name.startswith("torch.Tensor.")
    if base in _ARITHMETIC and (is_method or name == f"torch.{base}"):
        short = _ARITHMETIC[base]
        return f"torch.{short}", short
    if base == "flatten":
        return "Flatten", "flatten"
    op = "Tensor." + name.removeprefix("torch.Tensor.") if is_method else name
    return op, base.strip("_") or base


def _op_params(short: str, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The few readable settings of an op (``dim`` of a stack, ``start_dim`` of a flatten)."""
    names = _OP_ARGS.get(short)
    if names is None:
        return {}
    given = dict(zip(names, args))
    given.update(kwargs)
    params = {}
    for name in names[1:]:
        value = _jsonable(given.get(name))
        if value is not None:
            params[name] = value
    if short == "flatten":
        params.setdefault("start_dim", 0)
        if params.get("end_dim") == -1:
            del params["end_dim"]
    return params


def _layer_params(module: nn.Module) -> dict[str, Any]:
    """Constructor settings of a torch.nn layer, JSON-serialisable only."""
    params = {}
    for attr in _LAYER_ATTRS:
        if not hasattr(module, attr):
            continue
        value = getattr(module, attr)
        if attr == "bias" and (value is None or isinstance(value, torch.Tensor)):
            value = value is not None  # a bias *parameter* only tells us "has bias"
        value = _jsonable(value)
        if value is not None:
            params[attr] = value
    return params


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON (lists for tuples), or None when it cannot be shown."""
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list, torch.Size)):
        items = [_jsonable(item) for item in value]
        return None if any(item is None for item in items) else items
    return None
