"""The modules, parameters and buffers of a PyTorch model, by the names its author writes.

Names are those of ``named_modules()``, less the ``_orig_mod`` of a compiled submodule
(:mod:`.compiled`), whose wrapper is no node: it only forwards the call. Also here: which
modules are drawn as one leaf, and the ``self.x = ...`` line that built a module or weight.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from .compiled import clean_name, is_compiled_module
from .sources import SourceIndex

__all__ = ["ModuleTable", "is_torch_leaf"]

#: torch.nn classes that only group other modules: drawn as modules, not leaves.
CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)


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

        Children of containers (``layers.0``) point at the container's assignment.
        """
        parts = name.split(".")
        for cut in range(len(parts) - 1, -1, -1):
            owner = self.modules.get(".".join(parts[:cut]))
            if owner is None:
                return None
            site = sources.construction_site(owner, parts[cut])
            if site is not None:
                return site
            if not isinstance(owner, CONTAINERS):
                return None  # e.g. register_buffer(): no assignment line to show
        return None


def is_torch_leaf(module: nn.Module) -> bool:
    """A layer from the torch.nn package (drawn as one node), not a container."""
    return type(module).__module__.startswith("torch.nn.") and not isinstance(module, CONTAINERS)
