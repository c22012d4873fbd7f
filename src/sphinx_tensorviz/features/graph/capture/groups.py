"""Function groups: the Python helper functions a model calls become containers of their ops.

``nn.Module`` boundaries miss a lot of structure: Llama's ``apply_rotary_pos_emb`` and
``rotate_half``, ``repeat_kv`` and the attention-mask builders are plain functions, and
their ops would otherwise lie loose inside the module that called them. When an op is
recorded we walk the Python stack from the op's call site outwards to the ``forward``
of the innermost running module; every function frame in between is a group, nested
in call order. A group is drawn exactly like a module (``kind: "module"``, the same
``parent`` links) with ``group: "function"`` so renderers can style it.

Identity is per *call*: frames are kept alive while we capture so that two calls of
``repeat_kv`` (keys, then values) are two groups even if CPython would reuse the frame
address. Decorator wrappers (closures taking ``*args, **kwargs``) are skipped: they
forward a call, they do not compute anything a reader should see.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Collection
from types import CodeType, FrameType
from typing import Any

__all__ = ["FunctionGroups", "display_name", "forward_codes", "group_id", "unwrapped"]

_VARARGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
#: How far up the stack we look for the running module's ``forward``.
MAX_FRAMES = 64


def forward_codes(module: Any) -> frozenset[CodeType]:
    """The code objects a call of ``module`` runs as its ``forward``: where function groups stop.

    ``type(module).forward`` and every function along its ``__wrapped__`` chain. A class
    decorator may replace ``forward`` by a ``functools.wraps`` wrapper that sends the call
    somewhere else (transformers' ``use_experts_implementation`` picks an experts kernel at
    run time), so the unwrapped original may never run: the groups then stop at the wrapper,
    and the function it dispatched to is the outermost group.
    """
    return frozenset(code for function in unwrapped(getattr(type(module), "forward", None))
                     if (code := getattr(function, "__code__", None)) is not None)


def unwrapped(function: Any) -> list[Any]:
    """``function`` and what it wraps, outermost first (``functools.wraps`` sets ``__wrapped__``)."""
    chain: list[Any] = []
    while function is not None and len(chain) < MAX_FRAMES and all(function is not f for f in chain):
        chain.append(function)
        function = getattr(function, "__wrapped__", None)
    return chain


def group_id(module: str | None, function: str, call: int) -> str:
    """``<module>.<function>()`` for the first call made under ``module``, then ``...()_1``...

    ``function`` is the :func:`display_name`: a method keeps its class (``DynamicCache.update``,
    a custom autograd function's ``Square.forward``), as a bare ``forward()`` says nothing. Like
    op ids, group ids hang off the enclosing *module*, not the enclosing group, so they stay
    short and do not change when a group around them is collapsed or hidden.
    """
    base = f"{module}.{function}()" if module else f"{function}()"
    return base if call == 0 else f"{base}_{call}"


def display_name(code: CodeType) -> str:
    """``repeat_kv`` for a function, ``DynamicCache.update`` for a method (closures: their own name)."""
    parts = [p for p in code.co_qualname.split(".") if p != "<locals>"]
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return f"{parts[-2]}.{parts[-1]}"
    return parts[-1]


class FunctionGroups:
    """Creates group nodes for the function frames between an op and its module's forward."""

    def __init__(self, classify: Callable[[str], str | None],
                 add_group: Callable[[str, str | None, CodeType], None]) -> None:
        self._classify = classify
        self._add_group = add_group
        self._frames: dict[int, tuple[FrameType, str]] = {}  # id(frame) -> (frame kept alive, group id)
        self._calls: Counter[tuple[str | None, str]] = Counter()

    def parent_for(self, frame: FrameType | None, module_node: str | None,
                   stop: Collection[CodeType]) -> str | None:
        """The innermost group around ``frame`` (creating groups as needed), or ``module_node``."""
        chain: list[FrameType] = []
        found = False
        while frame is not None and len(chain) < MAX_FRAMES:
            code = frame.f_code
            if code in stop and self._is_module_entry(frame, stop):
                found = True
                break
            if self._classify(code.co_filename) is not None and not _is_wrapper(code):
                chain.append(frame)
            frame = frame.f_back
        if not found:
            return module_node  # e.g. an op run by a hook: no forward frame to anchor groups to
        parent = module_node
        for frame in reversed(chain):  # outermost first
            known = self._frames.get(id(frame))
            if known is not None and known[0] is frame:
                parent = known[1]
                continue
            if frame.f_code.co_name.startswith("<"):  # comprehensions and lambdas belong to their function
                continue
            name = display_name(frame.f_code)
            call = self._calls[(module_node, name)]
            self._calls[(module_node, name)] += 1
            node_id = group_id(module_node, name, call)
            self._frames[id(frame)] = (frame, node_id)
            self._add_group(node_id, parent, frame.f_code)
            parent = node_id
        return parent

    def _is_module_entry(self, frame: FrameType, stop: Collection[CodeType]) -> bool:
        """Whether ``frame`` runs the module's ``forward`` as the module call entered it.

        A decorator's wrapper code is shared by everything it decorates: a helper that
        ``forward`` calls through such a decorator runs the same code object, and must not end
        the walk there (its callers would lose their groups). The entry is called by PyTorch's
        module machinery, through wrappers of the same ``forward`` only.
        """
        caller = frame.f_back
        while caller is not None and caller.f_code in stop:
            caller = caller.f_back
        return caller is None or self._classify(caller.f_code.co_filename) is None

    def release(self) -> None:
        """Drop the frames (and the locals they hold) once the capture is over."""
        self._frames.clear()


def _is_wrapper(code: CodeType) -> bool:
    """A decorator's forwarding closure, e.g. ``def wrapper(*args, **kwargs)``."""
    return bool(code.co_freevars) and (code.co_flags & _VARARGS) == _VARARGS
