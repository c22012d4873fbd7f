"""Record a JAX model (plain JAX, Flax NNX, Flax Linen or Equinox) as the graph schema of
:mod:`..torch_graph`, via its jaxpr.

``jax.make_jaxpr`` gives every primitive equation with its shapes; :mod:`.hook` names the
equations while they are traced (module paths, function calls); :mod:`.names` finds the
library's names for the closed-over weights; :mod:`.builder` walks the jaxpr into nodes and
edges and evaluates it, which gives the output and the checkpoint activations.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

import jax

from .....core.closest import closest_names
from .builder import Builder
from .hook import ScopeHook
from .jaxpr import describe
from .names import closed_over, is_nnx, module_types, parameter_names, with_prefixes

__all__ = ["capture_jax_graph"]


def capture_jax_graph(fn: Callable[..., Any], args: tuple, model_file: str, *,
                      checkpoints: Sequence[str] = ()) -> dict[str, Any]:
    """Trace ``fn(*args)`` and return ``{"graph", "output", "raw", "activations"}``.

    ``graph`` has ``layers`` (input, module, op and output nodes), ``connections`` and
    ``outputs`` (one per array of the result, named by its path as the PyTorch capture names
    them: ``output`` for a bare array, else ``0``, ``carry``, ``aux.loss``...); ``output`` is
    the first of those arrays (None if the result holds none), ``raw`` the result; ``activations`` maps each name in ``checkpoints`` (a module path, function group or op
    id) to the value it produced. One ``input`` node (``input``, ``input_1``...) is made
    per array leaf of ``args``.

    Raises ``ValueError`` naming the checkpoints that can be captured if one cannot.
    """
    roots = with_prefixes(closed_over(fn))
    types = module_types()
    hook = ScopeHook(fn, model_file, roots={id(obj): name for name, obj in roots if types and isinstance(obj, types)})
    traced, state = _functional(fn, roots)
    try:
        with _library_scopes_off(), hook:
            closed, shapes = jax.make_jaxpr(traced, return_shape=True)(state, *args)
        names, sizes = parameter_names(roots)
        names_of_outputs = output_names(shapes)
        recorded: list[Builder] = []

        def record() -> tuple[list[Any], dict[str, Any]]:
            builder = Builder(model_file, hook, names, checkpoints)
            recorded.append(builder)
            outputs = _walk(builder, closed, state, args, names_of_outputs)
            builder.finish(sizes)
            return outputs, builder.activations

        # One compiled evaluation of the walked graph instead of one dispatch per equation.
        outputs, activations = jax.jit(record)()
        builder = recorded[0]
    finally:
        jax.clear_caches()  # the traced scopes must not stay in jit caches the lesson's checks reuse
    missing = [name for name in checkpoints if name not in activations]
    if missing:
        raise ValueError(_no_value_message(missing, builder.nodes))
    ids = [node["id"] for node in builder.nodes if node["kind"] == "output"]
    return {
        "graph": {"layers": builder.nodes, "connections": builder.edges,
                  "outputs": [{"name": name, "id": node_id, "type": "Array"}
                              for name, node_id in zip(names_of_outputs, ids)]},
        "output": outputs[0] if outputs else None,
        "raw": jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shapes), outputs),
        "activations": {name: activations[name] for name in checkpoints},
    }


def _no_value_message(missing: list[str], nodes: list[dict[str, Any]]) -> str:
    """What to write instead of each checkpoint that recorded nothing: the closest ids of any node
    (an op such as ``relu_0`` can be checkpointed too), then the modules and groups there are."""
    ids = [node["id"] for node in nodes
           if node["kind"] not in ("input", "output") and node["op"] not in ("Parameter", "Buffer")]
    close = list(dict.fromkeys(found for name in missing for found in closest_names(name, ids)))
    available = sorted(node["id"] for node in nodes if node["kind"] == "module")
    return (f"checkpoints produced no value: {', '.join(missing)}; "
            + (f"the closest nodes: {', '.join(close)}; " if close else "")
            + f"modules and groups that can be checkpointed: {', '.join(available) or 'none'}")


def output_names(shapes: Any) -> list[str]:
    """The name of each array in a result, in the jaxpr's output order: its path through the
    tuples, dicts, dataclasses and namedtuples (``0``, ``carry``, ``aux.loss``), as the PyTorch
    capture names a model's tensors, so ``lax.scan``'s ``(carry, ys)`` or a dict of losses gets
    one output node each; a bare array is ``output``."""
    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(shapes)[0]]
    return [".".join(_key_name(key) for key in path) or "output" for path in paths]


def _key_name(key: Any) -> str:
    """One step of a pytree path: a sequence index, a dict key or an attribute name."""
    for attribute in ("name", "key", "idx"):  # GetAttrKey, DictKey / FlattenedIndexKey, SequenceKey
        if hasattr(key, attribute):
            return str(getattr(key, attribute))
    return str(key)


def _walk(builder: Builder, closed: Any, state: Any, args: tuple, names: list[str]) -> list[Any]:
    """Inputs, the jaxpr's equations and one output node per output array (named ``names``);
    returns the output values."""
    jaxpr = closed.jaxpr
    held = len(jax.tree_util.tree_leaves(state))
    builder.add_consts(jaxpr.invars[:held], jax.tree_util.tree_leaves(state))
    for index, (var, value) in enumerate(zip(jaxpr.invars[held:], jax.tree_util.tree_leaves(args))):
        node_id = "input" if index == 0 else f"input_{index}"
        described = describe(var)
        builder.add_node(node_id, "Input", "input", None, dict(described), None, [described])
        builder.env[var] = node_id
        builder.values[var] = value
    builder.add_consts(jaxpr.constvars, closed.consts)
    builder.walk(jaxpr, None, 0)
    for name, var in zip(names, jaxpr.outvars):
        node_id = "output" if name == "output" else f"output.{name}"
        node_id = _unique(builder, node_id)
        builder.add_node(node_id, "Output", "output", None, {}, None, [describe(var)], label=name)
        builder.connect(builder.producers([var]), node_id)
    return builder.values_of(jaxpr.outvars)


def _unique(builder: Builder, node_id: str) -> str:
    """``node_id``, or ``node_id_1``... if a node has it (dict keys ``"a.b"`` and ``a: {b}``)."""
    number = 0
    while (f"{node_id}_{number}" if number else node_id) in builder.by_id:
        number += 1
    return f"{node_id}_{number}" if number else node_id


def _functional(fn: Any, roots: list[tuple[str, Any]]) -> tuple[Callable[..., Any], Any]:
    """``fn`` as a function of (held state, *args), with every Flax NNX model it uses lifted.

    NNX refuses modules built outside a trace inside its transforms (``nnx.jit``, ``nnx.scan``),
    so each NNX model (``fn`` itself, or one it closes over) is split into graph definition and
    state; while tracing, the model object temporarily holds a copy merged inside the trace,
    so ``fn`` runs unchanged. The state's arrays are the model's own: they keep their names.
    """
    nnx = sys.modules.get("flax.nnx")
    models = [obj for _, obj in roots if is_nnx(obj)]
    models = [m for m in models if not any(m is not other and _contains(nnx, other, m) for other in models)]
    if not models:
        return (lambda held, *args: fn(*args)), ()
    splits = [nnx.split(model) for model in models]

    def traced(held: Any, *args: Any) -> Any:
        saved = [dict(model.__dict__) for model in models]
        try:
            for model, (graphdef, _), state in zip(models, splits, held):
                model.__dict__.update(nnx.merge(graphdef, state).__dict__)
            return fn(*args)
        finally:
            for model, attributes in zip(models, saved):
                model.__dict__.clear()
                model.__dict__.update(attributes)

    return traced, [state for _, state in splits]


def _contains(nnx: Any, outer: Any, inner: Any) -> bool:
    return any(node is inner for _, node in nnx.iter_graph(outer))


def _library_scopes_off() -> contextlib.AbstractContextManager[Any]:
    """Linen opens its own ``jax.named_scope`` per module call; the hook names modules instead."""
    linen_module = sys.modules.get("flax.linen.module")
    if linen_module is None:
        return contextlib.nullcontext()
    return linen_module.override_named_call(False)
