"""Name the jaxpr while it is traced: module calls and named function calls become scopes.

A jaxpr equation only remembers its ``name_stack`` (``jax.named_scope`` entries, kept
through ``jit``, ``vmap``, ``grad`` and ``scan``) and a traceback. So while
``jax.make_jaxpr`` runs, a :func:`sys.setprofile` hook watches Python calls and opens a
named scope for

* every call of a module method (Flax NNX, Flax Linen, Equinox): ``tv:m:<path>`` where
  the path is the library's own (``layers.0.linear``, ``Dense_0``, ``layers[1]``);
* every named function of the user's files (``tv:f:<name>:<serial>``) and every library
  function the user's code calls directly (``tv:l:<name>:<serial>``, e.g. ``gelu``,
  ``softmax``), so they can be drawn as collapsible groups.

A library function that calls back into user code (``jax.vmap``'s wrapper, ``lax.scan``,
``nnx.jit``) is a transformation, not a function worth a box: it is marked *dissolved*
and the builder ignores its scope. The serial number keeps two calls of the same function
apart. Nothing is patched: the hook is removed when tracing ends, even on error.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import jax

from .jaxpr import code_location, code_span, library_dirs
from .names import child_path, is_linen, linen_path, module_types

#: Code names that are never drawn as function groups.
_ANONYMOUS = {"<lambda>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<module>"}
#: Library files that only dispatch operators on tracers (``x * y`` under ``grad``), never a function to name;
#: jit's traceback wrapper is transparent too: the jitted function's ``jit`` equation carries its name.
_PLUMBING = (os.path.join("jax", "_src", "numpy", "array_methods.py"), os.path.join("jax", "_src", "traceback_util.py"))
#: Prefix of every scope the hook opens; the builder recognises its own scopes by it.
PREFIX = "tv:"


@dataclass
class CallInfo:
    """What the builder needs to know about one function call the hook named."""

    name: str
    library: bool
    call_site: dict[str, int] | None
    definition: dict[str, Any] | None


@dataclass
class _Open:
    frame: FrameType
    scope: Any  # the entered jax.named_scope, or None when no scope was opened
    module: Any = None  # the module object, for module calls
    path: str | None = None
    serial: int | None = None  # function calls


@dataclass
class ScopeHook:
    """Profile hook that opens a named scope per module call and per named function call."""

    root_fn: Any
    model_file: str
    roots: dict[int, str] = field(default_factory=dict)  # id(module) -> path prefix ("" for the model)
    calls: dict[int, CallInfo] = field(default_factory=dict)
    dissolved: set[int] = field(default_factory=set)
    classes: dict[str, str] = field(default_factory=dict)  # module path -> class name
    module_sites: dict[str, dict[str, int] | None] = field(default_factory=dict)  # path -> first call's lines

    def __post_init__(self) -> None:
        self.model_file = os.path.realpath(self.model_file)
        self.types = module_types()
        self.module_codes = _module_method_codes(self.types)
        self.root_codes = _codes_of(self.root_fn)
        self.stack: list[_Open] = []
        self.user_file: dict[str, bool] = {}
        self.unnamed_roots = 0

    def __enter__(self) -> ScopeHook:
        self.previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(self.previous)
        while self.stack:  # an exception unwound frames without "return" events reaching us
            self._close(self.stack.pop())

    # -- the profile function ------------------------------------------------------------
    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self._on_call(frame)
        elif event == "return" and self.stack and self.stack[-1].frame is frame:
            self._close(self.stack.pop())

    def _on_call(self, frame: FrameType) -> None:
        code = frame.f_code
        if code in self.module_codes:
            self._enter_module(frame, code)
            return
        if code.co_name in _ANONYMOUS or code in self.root_codes:
            self._mark_user_code(code)
            return
        if self._is_user(code.co_filename):
            self._mark_user_code(code)
            self._enter_function(frame, code, library=False)
        elif frame.f_back is not None and self._is_user(frame.f_back.f_code.co_filename) \
                and not code.co_name.startswith("_") and not code.co_filename.endswith(_PLUMBING):
            self._enter_function(frame, code, library=True)

    def _enter_module(self, frame: FrameType, code: CodeType) -> None:
        module = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
        if not isinstance(module, self.types) or type(module).__name__.startswith("_") \
                or isinstance(getattr(module, "__self__", None), self.types):
            return  # a library's plumbing (Equinox's _VmapWrapper, a bound method), not the model's parts
        current = next((entry for entry in reversed(self.stack) if entry.path is not None), None)
        self._mark_user_code()  # a module called inside a library function: a transformation
        if current is not None and current.module is module:
            if code.co_name != "__call__" and self._is_user(code.co_filename):
                self._enter_function(frame, code, library=False)  # self.attend(...): a function group
            return
        path = self._module_path(module, current)
        if path not in self.classes:
            self.classes[path] = type(module).__name__
            self.module_sites[path] = self._call_site(frame.f_back)
        scope = jax.named_scope(f"{PREFIX}m:{path}") if path else None
        if scope is not None:
            scope.__enter__()
        self.stack.append(_Open(frame, scope, module=module, path=path))

    def _module_path(self, module: Any, current: _Open | None) -> str:
        """The module's path; a rebuilt copy of the running module (``jax.vmap(self.method)``)
        is that module again."""
        if is_linen(module):
            path = linen_path(module)
            if path is not None:
                return path
        if id(module) in self.roots:
            return self.roots[id(module)]
        if current is None:
            self.unnamed_roots += 1  # the model called from a function: its paths are the model's
            return "" if self.unnamed_roots == 1 else f"{type(module).__name__}_{self.unnamed_roots - 1}"
        relative = child_path(current.module, module, self.types)
        if relative is None and type(module) is type(current.module):
            return current.path or ""
        relative = relative or type(module).__name__
        if not current.path:
            return relative
        return f"{current.path}{'' if relative.startswith('[') else '.'}{relative}"

    def _enter_function(self, frame: FrameType, code: CodeType, library: bool) -> None:
        serial = len(self.calls)
        name = getattr(code, "co_qualname", code.co_name).rpartition(".")[2]
        self.calls[serial] = CallInfo(name, library, self._call_site(frame.f_back),
                                      code_location(code) if library else None)
        scope = jax.named_scope(f"{PREFIX}{'l' if library else 'f'}:{name}:{serial}")
        scope.__enter__()
        self.stack.append(_Open(frame, scope, serial=serial))

    def _mark_user_code(self, code: CodeType | None = None) -> None:
        """User code running inside a library function: that function is a transformation."""
        if code is not None and not self._is_user(code.co_filename):
            return
        for entry in reversed(self.stack):
            if entry.serial is not None and self.calls[entry.serial].library:
                self.dissolved.add(entry.serial)
            if entry.serial is not None and not self.calls[entry.serial].library:
                return

    def _close(self, entry: _Open) -> None:
        if entry.scope is not None:
            entry.scope.__exit__(None, None, None)

    # -- files and lines ---------------------------------------------------------------
    def _is_user(self, filename: str) -> bool:
        known = self.user_file.get(filename)
        if known is None:
            real = os.path.realpath(filename)
            known = not filename.startswith("<") and not real.startswith(library_dirs()) \
                and os.sep + "sphinx_tensorviz" + os.sep not in real
            self.user_file[filename] = known
        return known

    def _call_site(self, frame: FrameType | None) -> dict[str, int] | None:
        """The innermost line of the model file on the stack (where the user called it)."""
        while frame is not None:
            if os.path.realpath(frame.f_code.co_filename) == self.model_file:
                return code_span(frame.f_code, frame.f_lasti, frame.f_lineno)
            frame = frame.f_back
        return None


def _module_method_codes(types: tuple[type, ...]) -> set[CodeType]:
    """Code objects of the methods of every module class (library layers and the user's)."""
    codes: set[CodeType] = set()
    bases = {cls for base in types for cls in base.__mro__}
    todo = list(types)
    seen: set[type] = set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        todo.extend(cls.__subclasses__())
        if cls in bases:
            continue
        for name, attr in vars(cls).items():
            if name.startswith("__") and name != "__call__" or name in ("setup",):
                continue
            codes.update(_codes_of(attr))
    return codes


def _codes_of(obj: Any) -> set[CodeType]:
    """Code objects behind a function, method, wrapped method or jitted function."""
    codes: set[CodeType] = set()
    for _ in range(6):
        if obj is None:
            break
        code = getattr(obj, "__code__", None)
        if isinstance(code, CodeType):
            codes.add(code)
        nxt = None
        for attr in ("__func__", "method", "__wrapped__", "fun"):
            candidate = getattr(obj, attr, None) if not isinstance(obj, type) else None
            if candidate is not None and candidate is not obj and callable(candidate):
                nxt = candidate
                break
        obj = nxt
    return codes
