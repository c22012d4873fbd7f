"""Find the code a directive depends on: its source file and the project-local modules it imports.

Only files inside the Sphinx source folder are followed (installed packages are
recorded by version in the artifact instead). A path that escapes the folder is
refused: lesson paths are untrusted input.

The imports of a text are kept on the machine (``~/.cache/sphinx-tensorviz/imports``), by the
text's sha256 and this module's own: parsing the course's model files was a third of the time its
directives take to read, in every fresh build, for an answer that only changes with the text.
"""

from __future__ import annotations

import ast
import json
import sys
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path

from ..core.hashing import sha256_text
from ..core.kept_files import KeptFiles
from ..core.locations import cache_home


class SourceError(ValueError):
    """A ``:source:`` or ``:model:`` path that cannot be used; the message says why."""


def resolve_inside(srcdir: Path, candidate: Path, shown: str) -> Path:
    """``candidate`` resolved, if it is an existing file inside ``srcdir``. The messages name paths
    relative to the course folder: the page's error box publishes them."""
    root = srcdir.resolve()
    path = candidate.resolve()
    if not path.is_relative_to(root):
        raise SourceError(f"{shown!r} is outside the course folder (Sphinx's source folder); keep the files a "
                          "directive reads inside it")
    if not path.is_file():
        raise SourceError(f"{shown!r} does not exist (looked for {path.relative_to(root).as_posix()} in the "
                          "course folder)")
    return path


def local_imports(code: str, importer: Path, srcdir: Path) -> list[Path]:
    """Every module inside ``srcdir`` that ``code`` imports, transitively, in a stable order.

    ``importer`` is the file the code lives in (or would live in, for an inline
    body). Modules are looked up the way the worker's ``sys.path`` finds them:
    first beside the importer, then at the top of the source folder.
    """
    root = srcdir.resolve()
    roots = [importer.parent, root]
    seen: dict[Path, None] = {}
    queue: list[tuple[str, Path]] = [(code, importer)]
    while queue:
        text, current = queue.pop(0)
        for name, level in _imported_names(text):
            for found in _find_module(name, level, current, roots):
                if found.is_relative_to(root) and found != importer and found not in seen:
                    seen[found] = None
                    queue.append((found.read_text("utf-8"), found))
    return list(seen)


@lru_cache(maxsize=256)
def _imported_names(code: str) -> tuple[tuple[str, int], ...]:
    """(dotted name, relative level) for each import; submodule candidates included.

    Kept per text: the directives of a course import the same model files over and over; and
    on the machine, for the next build (see the module's docstring).
    """
    kept = KeptFiles(cache_home() / "imports").text(
        sha256_text(code), _scanner_identity(), "json", lambda: json.dumps(_scan(code)))
    try:
        names = json.loads(kept)
    except (ValueError, RecursionError):
        names = None
    if not (isinstance(names, list) and all(isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                                            and type(item[1]) is int for item in names)):
        names = _scan(code)  # a damaged entry: what it says is not used
    return tuple((name, level) for name, level in names)


@cache
def _scanner_identity() -> str:
    """This module's text and the Python that parses: what the kept scans depend on besides the code."""
    return sha256_text(f"{sys.version_info[:2]}\n" + Path(__file__).read_text("utf-8"))


def _scan(code: str) -> list[tuple[str, int]]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []  # the worker reports syntax errors with a proper traceback
    names: list[tuple[str, int]] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names.extend((prefix, 0) for alias in node.names for prefix in _prefixes(alias.name))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            # importing ``a.b`` runs ``a/__init__.py`` too
            names.extend((prefix, node.level) for prefix in (_prefixes(base) if base else [""]))
            # ``from pkg import mod`` may import a submodule rather than a name.
            names.extend((f"{base}.{a.name}".lstrip("."), node.level) for a in node.names if a.name != "*")
    return names


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.AST]) -> Iterator[ast.AST]:
    """Every statement of ``body`` and of the blocks inside it (functions, classes, ``if``, ``try``...).

    Imports are statements, so the expressions (most of a file's nodes) need not be visited.
    """
    for node in body:
        yield node
        for field in _BODIES:
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _prefixes(dotted: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``."""
    parts = dotted.split(".")
    return [".".join(parts[: n + 1]) for n in range(len(parts))]


def _find_module(name: str, level: int, importer: Path, roots: list[Path]) -> list[Path]:
    parts = [p for p in name.split(".") if p]
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = roots
    found: list[Path] = []
    for base in bases:
        target = base.joinpath(*parts) if parts else base
        for candidate in (target.with_suffix(".py") if parts else None, target / "__init__.py"):
            if candidate is not None and candidate.is_file():
                found.append(candidate.resolve())
                break
        else:
            continue
        break
    return found
