"""Names that the JAX libraries already give a model's parts: module paths and parameter paths.

Flax NNX, Flax Linen and Equinox each describe a model as a tree: NNX through its graph
API (``nnx.iter_graph``), Linen through bound scopes (``module.scope.path``) and its
variables dict, Equinox (and any pytree) through ``jax.tree_util`` key paths. This module
turns those trees into the dotted names the graph uses (``layers.0.linear``,
``Dense_0.kernel``, ``layers[1].weight``) without knowing any particular model.

Libraries are only touched when the user's code already imported them (``sys.modules``),
so plain-JAX lessons never import Flax or Equinox.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jax

#: Functions searched for closed-over models and weights (a partial, a bound method, a closure...).
_MAX_UNWRAP_DEPTH = 4
#: Trailing component of a dotted/indexed path: ``.kernel`` or ``[0]``.
_LAST_PART = re.compile(r"(\.[^.\[\]]+|\[[^\]]*\])$")


def module_types() -> tuple[type, ...]:
    """Base classes of the modules of every JAX library the user's code has imported."""
    found: list[type] = []
    if "flax.nnx" in sys.modules:
        found.append(sys.modules["flax.nnx"].Module)
    if "flax.linen" in sys.modules:
        found.append(sys.modules["flax.linen"].Module)
    if "equinox" in sys.modules:
        found.append(sys.modules["equinox"].Module)
    return tuple(found)


def is_linen(obj: Any) -> bool:
    linen = sys.modules.get("flax.linen")
    return linen is not None and isinstance(obj, linen.Module)


def is_nnx(obj: Any) -> bool:
    nnx = sys.modules.get("flax.nnx")
    return nnx is not None and isinstance(obj, nnx.Module)


def owner_of(path: str) -> str:
    """``layers.0.kernel`` -> ``layers.0``; ``layers[1].weight`` -> ``layers[1]``; ``w`` -> ``""``."""
    return _LAST_PART.sub("", path) if _LAST_PART.search(path) else ""


def format_path(parts: tuple[Any, ...]) -> str:
    """A ``jax.tree_util`` key path or an NNX path tuple as text: ``layers[0].weight``, ``blocks.0.attn``."""
    text = ""
    for part in parts:
        name = getattr(part, "name", None)  # GetAttrKey
        if name is None:
            name = getattr(part, "key", None)  # DictKey
        if name is None and hasattr(part, "idx"):  # SequenceKey: Equinox lists show as [i]
            text += f"[{part.idx}]"
            continue
        if name is None:
            name = part
        text += f".{name}" if text else str(name)
    return text


# -- modules ------------------------------------------------------------------------------
def submodules(obj: Any, types: tuple[type, ...]) -> Iterator[tuple[str, Any]]:
    """Every module nested in ``obj`` (not ``obj`` itself), with its path relative to ``obj``."""
    if is_nnx(obj):
        nnx = sys.modules["flax.nnx"]
        for parts, node in nnx.iter_graph(obj):
            if parts and isinstance(node, types):
                yield ".".join(str(p) for p in parts), node
        return
    leaves, _ = jax.tree_util.tree_flatten_with_path(
        obj, is_leaf=lambda x: x is not obj and isinstance(x, types))
    for parts, leaf in leaves:
        if isinstance(leaf, types):
            path = format_path(parts)
            yield path, leaf
            for sub, node in submodules(leaf, types):
                yield f"{path}{'' if sub.startswith('[') else '.'}{sub}", node


def child_path(parent: Any, child: Any, types: tuple[type, ...]) -> str | None:
    """Where ``child`` sits inside ``parent``: by identity, else the only module of its class.

    Transforms (``nnx.jit``, ``nnx.scan``, ``eqx.filter_vmap``, ``lax.scan`` over stacked
    layers) rebuild modules inside the trace, so the object called is a copy; its class
    still names the field it came from when that class occurs once.
    """
    same_type = []
    for path, node in submodules(parent, types):
        if node is child:
            return path
        if type(node) is type(child):
            same_type.append(path)
    return same_type[0] if len(same_type) == 1 else None


def linen_path(module: Any) -> str | None:
    """The absolute path of a bound Linen module (``()`` for the root gives ``""``)."""
    scope = getattr(module, "scope", None)
    path = getattr(scope, "path", None)
    return None if path is None else ".".join(str(p) for p in path)


# -- closed-over objects ----------------------------------------------------------------------
def closed_over(fn: Any) -> list[tuple[str, Any]]:
    """(name, object) pairs a callable carries: itself if a module, partial args, closures, globals.

    The name is the variable's name, used as a prefix for plain arrays and dicts; modules and
    Linen variables dicts keep their own paths (``""``).
    """
    found: list[tuple[str, Any]] = []
    seen: set[int] = set()

    def visit(name: str, obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > _MAX_UNWRAP_DEPTH or isinstance(obj, type):
            return
        seen.add(id(obj))
        if type(obj).__name__.startswith("_") and callable(obj):  # a library's wrapper (eqx.filter_jit)
            wrapped = getattr(obj, "__wrapped__", None)
            if wrapped is not None:
                visit(name, wrapped, depth + 1)
                return
        if _holds_arrays(obj):
            found.append((name, obj))
            if not callable(obj):
                return
        if isinstance(obj, functools.partial):
            visit(name, obj.func, depth + 1)
            for index, arg in enumerate(obj.args):
                visit(f"{name}{index}" if name else f"arg{index}", arg, depth + 1)
            for key, arg in obj.keywords.items():
                visit(key, arg, depth + 1)
            return
        for attr in ("__wrapped__", "__self__", "fun", "f"):
            inner = getattr(obj, attr, None)
            if inner is not None and not isinstance(inner, type(sys)) and (callable(inner) or _holds_arrays(inner)):
                visit(name if attr != "__self__" else "", inner, depth + 1)
        code = getattr(obj, "__code__", None)
        if code is None:
            return
        for var, cell in zip(code.co_freevars, getattr(obj, "__closure__", None) or ()):
            try:
                visit(var, cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue
        globals_ = getattr(obj, "__globals__", {})
        for var in code.co_names:
            if var in globals_:
                visit(var, globals_[var], depth + 1)

    visit("", fn, 0)
    return found


def with_prefixes(roots: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The prefix each root's names get: none for the one model (its own paths, as in PyTorch),
    the variable name for each of several models (``encoder.layers.0``) and for plain arrays."""
    types = tuple(t for t in module_types() if not is_linen_type(t))
    models = [obj for _, obj in roots if types and isinstance(obj, types)]
    named = []
    for name, obj in roots:
        if types and isinstance(obj, types):
            name = (name or type(obj).__name__) if len(models) > 1 else ""
        named.append((name, obj))
    return named


def is_linen_type(cls: type) -> bool:
    linen = sys.modules.get("flax.linen")
    return linen is not None and issubclass(cls, linen.Module)


def _holds_arrays(obj: Any) -> bool:
    types = module_types()
    if types and isinstance(obj, types):
        return True
    if isinstance(obj, jax.Array):
        return True
    if isinstance(obj, (dict, list, tuple)) and obj:
        try:
            return any(isinstance(leaf, jax.Array) for leaf in jax.tree_util.tree_leaves(obj))
        except Exception:  # noqa: BLE001 - an unflattenable container holds nothing we can name
            return False
    return False


# -- parameters -------------------------------------------------------------------------------
def parameter_names(roots: list[tuple[str, Any]]) -> tuple[dict[int, tuple[str, str]], dict[str, int]]:
    """``id(array)`` -> (dotted name, kind) for every array reachable from ``roots``, and the
    size of each named array (for parameter counts).

    ``kind`` is ``Parameter`` for trainable weights, ``Buffer`` for other variables
    (batch statistics, caches). Closed-over arrays keep their identity in the jaxpr's
    constants, which is how a constant gets its name back.
    """
    names: dict[int, tuple[str, str]] = {}
    sizes: dict[str, int] = {}
    for prefix, root in roots:
        for name, array, kind in _arrays_of(prefix, root):
            names.setdefault(id(array), (name, kind))
            sizes.setdefault(name, int(array.size))
    return names, sizes


def _arrays_of(prefix: str, root: Any) -> Iterator[tuple[str, Any, str]]:
    if is_nnx(root):
        nnx = sys.modules["flax.nnx"]
        for parts, node in nnx.iter_graph(root):
            if isinstance(node, nnx.Variable):
                kind = "Parameter" if isinstance(node, nnx.Param) else "Buffer"
                name = ".".join(str(p) for p in (prefix, *parts) if p != "")
                for value in _variable_values(node):
                    yield name, value, kind
        return
    if is_linen(root):
        try:
            root = root.variables  # a bound module carries its variables
        except Exception:  # noqa: BLE001 - an unbound Linen module holds no arrays
            return
        prefix = ""
    if isinstance(root, Mapping) and isinstance(root.get("params"), Mapping):
        for collection, tree in root.items():  # a Linen variables dict: {"params": {...}, ...}
            # paths without the collection, so batch statistics sit in their module too
            yield from _tree_arrays("", tree, "Parameter" if collection == "params" else "Buffer")
        return
    yield from _tree_arrays(prefix, root, "Parameter")


def _tree_arrays(prefix: str, tree: Any, kind: str) -> Iterator[tuple[str, Any, str]]:
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    for parts, leaf in leaves:
        if isinstance(leaf, jax.Array):
            path = format_path(parts)
            name = f"{prefix}{'' if not path or path.startswith('[') or not prefix else '.'}{path}" or prefix
            yield name, leaf, kind


def _variable_values(variable: Any) -> list[Any]:
    """The array(s) an NNX Variable holds, read without copying (identity matters)."""
    values = []
    for reader in ("get_raw_value", "get_value"):
        method: Callable[[], Any] | None = getattr(variable, reader, None)
        if method is not None:
            try:
                values.append(method())
            except Exception:  # noqa: BLE001 - a Variable type without that reader
                continue
    raw = variable.__dict__.get("_raw_value") if hasattr(variable, "__dict__") else None
    if raw is not None:
        values.append(raw)
    return [v for v in values if isinstance(v, jax.Array)]
