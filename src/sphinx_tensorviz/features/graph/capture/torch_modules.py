"""The modules, parameters and buffers of a PyTorch model, by the names its author writes.

Names are those of ``named_modules()``, less the ``_orig_mod`` of a compiled submodule
(:mod:`.compiled`), whose wrapper is no node: it only forwards the call. Also here: which
modules are drawn as one leaf, the ``self.x = ...`` line that built a module or weight, and why
a ``:checkpoints:`` name recorded nothing (a typo, a module that never ran, a module inside a
torch.nn layer), since each wants a different fix.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from torch import nn

from ....core.closest import closest_names
from .compiled import clean_name, is_compiled_module
from .sources import SourceIndex

__all__ = ["ModuleTable", "is_torch_leaf"]

#: torch.nn classes that only group other modules: drawn as modules, not leaves.
CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)
#: How many names a message lists.
_LISTED = 8


class ModuleTable:
    """``modules`` (name -> module, the root as ``""``), ``names`` (id -> name, root left out) and
    ``tensors`` (id -> (name, ``Parameter`` or ``Buffer``))."""

    def __init__(self, model: nn.Module) -> None:
        self.modules: dict[str, nn.Module] = {clean_name(name): module for name, module in model.named_modules()
                                              if not is_compiled_module(module)}
        self.names = {id(module): name for name, module in self.modules.items() if name}
        self.tensors: dict[int, tuple[str, str]] = {}
        for name, buffer in model.named_buffers():
            self.tensors[id(buffer)] = (clean_name(name), "Buffer")
        for name, param in model.named_parameters():
            self.tensors[id(param)] = (clean_name(name), "Parameter")

    def construction_site(self, sources: SourceIndex, name: str) -> dict[str, Any] | None:
        """Lines of ``self.<attr> = ...`` that built ``name`` (a module, parameter or buffer).

        Children of containers (``layers.0``) point at the container's assignment, and the
        weights of a torch.nn layer at the layer's (``self.conv1d = nn.Conv1d(...)`` made
        ``conv1d.weight``, which a model may use directly, as Mamba's mixer does).
        """
        parts = name.split(".")
        for cut in range(len(parts) - 1, -1, -1):
            owner = self.modules.get(".".join(parts[:cut]))
            if owner is None:
                return None
            site = sources.construction_site(owner, parts[cut])
            if site is not None:
                return site
            if not isinstance(owner, CONTAINERS) and not is_torch_leaf(owner):
                return None  # e.g. register_buffer(): no assignment line to show
        return None

    def checkpoint_problem(self, missing: Collection[str], nodes: Collection[str], ran: Collection[str],
                           edges: Iterable[dict[str, Any]] = ()) -> str:
        """Why each of ``missing`` recorded nothing; ``nodes`` are the graph's ids, ``ran`` the modules
        called, ``edges`` the graph's connections (which ops read a module's weights)."""
        edges = list(edges)
        return "; ".join(f"checkpoint {name!r} {self._why_nothing(name, nodes, ran, edges)}" for name in missing)

    def _why_nothing(self, name: str, nodes: Collection[str], ran: Collection[str],
                     edges: list[dict[str, Any]]) -> str:
        if name in nodes:
            return "produced no tensor (it returned none)"
        layer = self._enclosing_leaf(name)
        if name in self.modules and layer is not None:
            return f"is inside the torch.nn layer {layer!r}, whose insides are not recorded; checkpoint {layer!r}"
        if name in self.modules and name not in ran:
            users = self._weight_users(name, edges)
            if users:  # Mamba's mixer passes self.conv1d.weight to F.conv1d: the op is what ran
                return (f"is a module of the model that never ran in this forward pass: its weights are used by "
                        f"{', '.join(users)} (a function given the weights, not the module's call); "
                        f"checkpoint {users[0]!r}")
            return ("is a module of the model that never ran in this forward pass (a branch not taken, or a "
                    "module forward does not call); checkpoint a module that runs")
        close = closest_names(name, [*(n for n in self.modules if n), *nodes])
        if close:
            found = f"is not a module or node of the graph; the closest module paths and nodes: {', '.join(close)}"
        else:
            top = [n for n in self.modules if n and "." not in n][:_LISTED]
            found = f"is not a module or node of the graph; its top-level modules: {', '.join(top) or 'none'}"
        return found + _fused_softmax_note(name, nodes)

    def _weight_users(self, name: str, edges: list[dict[str, Any]]) -> list[str]:
        """The ops that apply module ``name``'s weights to data (at most ``_LISTED``).

        An op fed only by the weights (Mamba's ``self.conv1d.weight.squeeze(1)``) is a weight too:
        the op that combines them with something else (``F.conv1d(x, ...)``) is what an author
        meant by the layer. Edges are in the order the ops ran, so one pass sees each op's inputs.
        """
        derived = {tensor for tensor, _ in self.tensors.values() if tensor.startswith(name + ".")}
        inputs: dict[str, list[str]] = {}
        for edge in edges:
            inputs.setdefault(edge["target"], []).append(edge["source"])
        users = []
        for target, sources in inputs.items():
            if any(source in derived for source in sources):
                if all(source in derived for source in sources):
                    derived.add(target)
                else:
                    users.append(target)
        return users[:_LISTED]

    def _enclosing_leaf(self, name: str) -> str | None:
        parts = name.split(".")
        for cut in range(1, len(parts)):
            owner = ".".join(parts[:cut])
            if owner in self.modules and is_torch_leaf(self.modules[owner]):
                return owner
        return None


def _fused_softmax_note(name: str, nodes: Collection[str]) -> str:
    """Where a softmax asked for went: ``scaled_dot_product_attention`` (transformers' default
    attention) computes it inside one op, so no node holds the attention weights."""
    fused = [node for node in nodes if node.rsplit(".", 1)[-1].startswith("scaled_dot_product_attention")]
    if "softmax" not in name.rsplit(".", 1)[-1].lower() or not fused:
        return ""
    listed = ", ".join(fused[:_LISTED // 2]) + (", ..." if len(fused) > _LISTED // 2 else "")
    return (f"; its softmax is inside scaled_dot_product_attention ({listed}), which keeps the attention "
            'weights to itself: build a transformers model with attn_implementation="eager" (or compute '
            "softmax(q @ k.T) in the model) to checkpoint them")


def is_torch_leaf(module: nn.Module) -> bool:
    """A layer from the torch.nn package (drawn as one node), not a container."""
    return type(module).__module__.startswith("torch.nn.") and not isinstance(module, CONTAINERS)
