"""Where recorded nodes come from: project files, library files, and the lines to show.

A node's ``source`` is ``{"line", "endLine"}`` in the lesson's ``:model:`` file (no
``file`` key, as in older artifacts) or ``{"file": key, "line", "endLine"}`` in another
file. Which files are *library* is decided by where they live, never by a list of
names: a file inside the Sphinx source folder is the author's (``project``); any other
Python file (site-packages, the standard library, a checkout elsewhere) is ``library``.
Files of PyTorch itself and of this extension are never call sites: they are the
machinery, not the model.

Library files are not in the course, so the artifact carries the lines a reader needs:
only the functions that recorded nodes point into, size-bounded, with the package name,
version and license (from the installed distribution's metadata). A cache-only build
without the library installed can still show them.
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import sysconfig
from collections.abc import Iterable
from functools import cache
from importlib import metadata
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import torch

from .groups import unwrapped

__all__ = ["SourceIndex", "MAX_LINES_PER_FILE", "MAX_LINES_TOTAL"]

#: Upper bounds on the library lines an artifact carries (one file / all files).
MAX_LINES_PER_FILE = 900
MAX_LINES_TOTAL = 4000
#: Longest single function excerpt; longer functions keep a window around referenced lines.
MAX_FUNCTION_LINES = 160

_MACHINERY = tuple(
    str(Path(p).resolve()) + os.sep
    for p in (Path(torch.__file__).parent, Path(__file__).resolve().parents[2])
)


class SourceIndex:
    """Classifies files, finds call sites and construction sites, and collects excerpts."""

    def __init__(self, entry_file: str, srcdir: str | None) -> None:
        self.entry = os.path.realpath(entry_file)
        self.srcdir = os.path.realpath(srcdir) + os.sep if srcdir else os.path.dirname(self.entry) + os.sep
        self._keys: dict[str, str | None] = {}
        self._positions: dict[CodeType, list] = {}
        self._assignments: dict[str, _AssignmentIndex] = {}
        #: library key -> (absolute path, referenced code objects / line spans)
        self._library: dict[str, tuple[str, set[tuple[int, int]]]] = {}
        self.project_files: set[str] = set()

    # -- classification ---------------------------------------------------------------
    def key(self, filename: str) -> str | None:
        """``""`` for the entry file, a relative path for other files, None for machinery."""
        if filename in self._keys:
            return self._keys[filename]
        key: str | None
        if filename.startswith("<"):
            key = None  # frozen modules, exec'd strings
        else:
            path = os.path.realpath(filename)
            if path.startswith(_MACHINERY) or not path.endswith(".py"):
                key = None
            elif path == self.entry:
                key = ""
            elif path.startswith(self.srcdir):
                key = Path(path[len(self.srcdir):]).as_posix()
                self.project_files.add(key)
            else:
                key = _library_key(path)
        self._keys[filename] = key
        return key

    def is_library(self, key: str | None) -> bool:
        return bool(key) and key not in self.project_files

    # -- sources of nodes ---------------------------------------------------------------
    def call_site(self, frame: FrameType | None) -> tuple[dict[str, Any] | None, FrameType | None]:
        """(source, frame) of the innermost model-side frame at or above ``frame``."""
        while frame is not None:
            code = frame.f_code
            key = self.key(code.co_filename)
            if key is not None:
                positions = self._positions.get(code)
                if positions is None:
                    positions = self._positions[code] = list(code.co_positions())
                index = frame.f_lasti // 2
                line, end_line = positions[index][:2] if index < len(positions) else (None, None)
                line = line or frame.f_lineno
                end_line = max(end_line or line, line)
                self.reference(key, code.co_filename, _function_span(code, line, end_line))
                return _source(key, line, end_line), frame
            frame = frame.f_back
        return None, None

    def function_site(self, code: CodeType) -> dict[str, Any] | None:
        """The ``def`` of a function (the source of a function group)."""
        key = self.key(code.co_filename)
        if key is None:
            return None
        first = code.co_firstlineno
        last = _def_line(code.co_filename, first)  # through the decorators to the ``def`` line
        self.reference(key, code.co_filename, _function_span(code, first, last))
        return _source(key, first, last)

    def construction_site(self, owner: Any, attr: str) -> dict[str, Any] | None:
        """Lines of ``self.<attr> = ...`` in the ``__init__`` of ``owner``'s class (or a base, or the
        ``__init__`` a class decorator wrapped)."""
        inits = (init for cls in type(owner).__mro__ for init in unwrapped(cls.__dict__.get("__init__")))
        for init in inits:  # a decorated ``__init__`` (``functools.wraps``): the one it wraps too
            code = getattr(init, "__code__", None)
            if code is None:
                continue
            key = self.key(code.co_filename)
            if key is None:
                continue
            index = self._assignments.get(code.co_filename)
            if index is None:
                index = self._assignments[code.co_filename] = _AssignmentIndex(code.co_filename)
            span = index.find(code.co_firstlineno, attr)
            if span is not None:
                self.reference(key, code.co_filename, _function_span(code, *span))
                return _source(key, *span)
        return None

    def reference(self, key: str, filename: str, span: tuple[int, int]) -> None:
        """Remember that lines ``span`` of a library file must travel with the artifact."""
        if self.is_library(key):
            self._library.setdefault(key, (filename, set()))[1].add(span)

    # -- what the artifact carries ----------------------------------------------------
    def files(self) -> dict[str, dict[str, Any]]:
        """``{key: {...}}`` for every non-entry file a node points into, in sorted order."""
        result: dict[str, dict[str, Any]] = {key: {"path": key, "kind": "project"}
                                             for key in sorted(self.project_files)}
        budget = MAX_LINES_TOTAL
        for key in sorted(self._library):
            filename, spans = self._library[key]
            excerpt, used = _excerpt(filename, spans, min(budget, MAX_LINES_PER_FILE))
            budget -= used
            result[key] = {"path": key, "kind": "library", **_package_of(key), "excerpts": excerpt}
        return result


def _def_line(filename: str, first: int) -> int:
    """The ``def`` line of a function whose code starts at ``first`` (its first decorator)."""
    for line in range(first, first + 30):
        text = linecache.getline(filename, line).lstrip()
        if text.startswith(("def ", "async def ")):
            return line
        if not text:
            break
    return first


def _source(key: str, line: int, end_line: int) -> dict[str, Any]:
    return {"line": line, "endLine": end_line} if key == "" else {"file": key, "line": line, "endLine": end_line}


def _library_key(path: str) -> str:
    """The import path of a library file (``transformers/models/llama/modeling_llama.py``).

    Relative to the longest ``sys.path`` entry (or stdlib/site folder) that contains it, so
    the key is the same on every machine.
    """
    roots = {os.path.realpath(p) for p in sys.path if p} | {
        os.path.realpath(p) for p in sysconfig.get_paths().values() if p
    }
    best = ""
    for root in roots:
        prefix = root.rstrip(os.sep) + os.sep
        if path.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return Path(path[len(best):]).as_posix() if best else Path(path).name


@cache
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


def _package_of(key: str) -> dict[str, Any]:
    """``package``, ``version`` and ``license`` of the distribution that installed ``key``."""
    top = key.split("/", 1)[0].removesuffix(".py")
    names = _distributions().get(top) or []
    if not names:
        return {"package": top, "version": None, "license": None}
    dist = metadata.distribution(names[0])
    meta = dist.metadata
    license_ = meta.get("License-Expression") or ""
    if not license_ or len(license_) > 80:
        short = meta.get("License") or ""
        license_ = short if short and len(short) <= 80 and "\n" not in short else ""
    if not license_:
        classifiers = [c for c in (meta.get_all("Classifier") or []) if c.startswith("License ::")]
        license_ = classifiers[0].rpartition(" :: ")[2] if classifiers else ""
    return {"package": meta.get("Name") or names[0], "version": dist.version, "license": license_ or None}


@cache
def _code_lines(code: CodeType) -> tuple[int, int]:
    """(first, last) line of a code object; cached, since every recorded op asks."""
    lines = [ln for _, _, ln in code.co_lines() if ln is not None]
    return code.co_firstlineno, max(lines, default=code.co_firstlineno)


def _function_span(code: CodeType, line: int, end_line: int) -> tuple[int, int]:
    """The lines of the function ``code`` (bounded around ``line``..``end_line``)."""
    first, last = _code_lines(code)
    last = max(last, end_line)
    if code.co_name == "<module>":
        first, last = line, end_line
    if last - first + 1 > MAX_FUNCTION_LINES:
        first = max(first, line - MAX_FUNCTION_LINES // 4)
        last = min(last, max(end_line, first + MAX_FUNCTION_LINES - 1))
    return first, last


def _excerpt(filename: str, spans: Iterable[tuple[int, int]], budget: int) -> tuple[list[dict[str, Any]], int]:
    """Merged line spans with their text, at most ``budget`` lines in all."""
    try:
        text = Path(filename).read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return [], 0
    merged: list[list[int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    out, used = [], 0
    for first, last in merged:
        last = min(last, len(text), first + budget - used - 1)
        if last < first:
            break
        out.append({"start": first, "lines": text[first - 1:last]})
        used += last - first + 1
    return out, used


class _AssignmentIndex:
    """``self.<attr> = ...`` spans inside every ``__init__`` of one file.

    Modules are already built when we capture, so we cannot watch the assignment
    happen; reading the file is the reliable way to point at the construction line.
    """

    def __init__(self, path: str) -> None:
        self.by_first_line: dict[int, dict[str, tuple[int, int]]] = {}
        try:
            tree = ast.parse(Path(path).read_text("utf-8"), filename=path)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            return
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__init__":
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                self_name = node.args.args[0].arg if node.args.args else "self"
                spans = _self_assignments(node, self_name)
                self.by_first_line[first] = spans
                self.by_first_line.setdefault(node.lineno, spans)

    def find(self, first_line: int, attr: str) -> tuple[int, int] | None:
        return self.by_first_line.get(first_line, {}).get(attr)


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
