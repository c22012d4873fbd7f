"""Name the tensors inside whatever a model returns.

Models return a tensor, a tuple ``(logits, features)``, a dict, a dataclass, or a
library container such as Hugging Face's ``ModelOutput`` (a dict *and* a dataclass).
Each tensor inside becomes a named graph output: ``logits``, ``hidden_states.2``,
``0``, ``1``... Objects that hold tensors but are none of these (a KV ``Cache``) are
kept whole: one output named after where they sit, listing the tensors they expose
(``layers.0.keys: 1×2×6×4``), or marked opaque when they expose none. Nothing here
fails on an unknown type: at worst it becomes an opaque output with a note.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["NamedOutput", "exposed_summary", "name_outputs", "tensors_in"]

#: How deep we look inside a library object for tensors, and how many we list.
_OBJECT_DEPTH = 4
_MAX_LISTED = 12


@dataclass
class NamedOutput:
    """One graph output: a tensor, or a library object with the tensors it exposes."""

    name: str
    tensor: torch.Tensor | None = None
    type_name: str = "Tensor"
    exposed: list[tuple[str, torch.Tensor]] = field(default_factory=list)

    @property
    def tensors(self) -> list[torch.Tensor]:
        return [self.tensor] if self.tensor is not None else [t for _, t in self.exposed]


def name_outputs(value: Any) -> list[NamedOutput]:
    """The outputs of a model call, in a deterministic order (a bare tensor is ``output``)."""
    if isinstance(value, torch.Tensor):
        return [NamedOutput("output", value)]
    found: list[NamedOutput] = []
    seen: set[int] = set()
    _walk(value, "", found, seen)
    return found


def _children(value: Any) -> list[tuple[str, Any]] | None:
    """Named children of a standard container, or None for anything else."""
    if isinstance(value, Mapping):  # dicts and ModelOutput (keys are the non-None fields)
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple
        return [(str(k), getattr(value, k)) for k in value._fields]
    if isinstance(value, (tuple, list)):
        return [(str(i), v) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f.name, getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    return None


def _walk(value: Any, prefix: str, found: list[NamedOutput], seen: set[int]) -> None:
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, torch.Size)):
        return  # plain values (e.g. ``x.shape``) are not graph outputs
    if id(value) in seen:
        return
    seen.add(id(value))
    name = prefix or "output"
    if isinstance(value, torch.Tensor):
        found.append(NamedOutput(name, value))
        return
    children = _children(value)
    if children is not None:
        for key, child in children:
            _walk(child, f"{prefix}.{key}" if prefix else key, found, seen)
        return
    exposed = list(_exposed(value, "", 0, set()))
    found.append(NamedOutput(name, None, type(value).__name__, exposed))


def _exposed(value: Any, prefix: str, depth: int, seen: set[int]) -> Iterator[tuple[str, torch.Tensor]]:
    """Tensors reachable through public attributes and standard containers of an object."""
    if id(value) in seen or depth > _OBJECT_DEPTH:
        return
    seen.add(id(value))
    if isinstance(value, torch.Tensor):
        yield prefix, value
        return
    children = _children(value)
    if children is None:
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, dict):
            return
        children = [(k, v) for k, v in attributes.items() if not k.startswith("_")]
    for key, child in children:
        if child is None or isinstance(child, (bool, int, float, str, bytes, type)):
            continue
        yield from _exposed(child, f"{prefix}.{key}" if prefix else key, depth + 1, seen)


def exposed_summary(output: NamedOutput) -> dict[str, Any]:
    """Params of an object output: its type, up to a dozen exposed tensors, or an opaque note."""
    params: dict[str, Any] = {"type": output.type_name}
    if not output.exposed:
        params["note"] = "opaque: a library object that exposes no tensors; not drawn further"
        return params
    for name, tensor in output.exposed[:_MAX_LISTED]:
        params[name] = "×".join(str(n) for n in tensor.shape) or "scalar"
    if len(output.exposed) > _MAX_LISTED:
        params["more"] = f"{len(output.exposed) - _MAX_LISTED} more tensors"
    return params


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """Tensors inside nested tuples/lists/dicts (the arguments of a call), in order."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from tensors_in(item)
