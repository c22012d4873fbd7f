"""Calls that return their input unchanged are no ops of the graph.

Edges follow tensor identity: the node that last returned a tensor object is its producer.
``t.to("cpu")`` on a CPU tensor, ``.contiguous()`` on a contiguous one, ``.float()`` on a
float tensor or ``.requires_grad_(False)`` return the very object they were given, so if
they were recorded they would take the tensor over, and every later use of it, a model
output included, would be drawn from wherever the no-op happened to run (a loss helper
called after the head, transformers' ``load_balancing_loss_func``). They compute nothing, so
they are not recorded at all and the tensor keeps its producer.

An in-place op (``add_``, ``relu_``, ``x[0] = 0``) also returns its input, but changed: the
tensor's version counter tells the two apart. Inference-mode tensors have no version counter;
for them the op's name decides (a trailing ``_`` or an augmented assignment is in place).
"""

from __future__ import annotations

from typing import Any

import torch

from .outputs import tensors_in

__all__ = ["changed_outputs", "versions_of"]


def versions_of(value: Any) -> dict[int, int | None]:
    """``id -> version counter`` of the tensors among a call's arguments, taken before the call."""
    return {id(tensor): _version(tensor) for tensor in tensors_in(value)}


def changed_outputs(out: Any, before: dict[int, int | None], name: str) -> list[torch.Tensor]:
    """The tensors a call returned, less those that are an argument returned unchanged."""
    return [tensor for tensor in tensors_in(out) if not _unchanged(tensor, before, name)]


def _unchanged(tensor: torch.Tensor, before: dict[int, int | None], name: str) -> bool:
    if id(tensor) not in before:  # a new tensor (the arguments are alive, so ids are not reused)
        return False
    old, new = before[id(tensor)], _version(tensor)
    if old is None or new is None:
        short = name.rpartition(".")[2]
        return not (short.startswith("__i") or (short.endswith("_") and not short.endswith("__")))
    return old == new


def _version(tensor: torch.Tensor) -> int | None:
    try:
        return int(tensor._version)
    except RuntimeError:  # an inference tensor keeps no version counter
        return None
