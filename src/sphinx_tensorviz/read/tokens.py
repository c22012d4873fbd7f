"""``:tokens:``, the labels of a language model figure's token ids, read the same by every kind that
takes them (``tv-attention``, ``tv-patch``): a list, or ``file.py:function`` in the course whose file
(and what it imports) is part of the figure's code, so editing it runs the figure again. A metric function
(``tv-patch``) is read the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.util.docutils import SphinxDirective

from ..core.hashing import sha256_text
from . import options as opt
from .sources import local_imports, resolve_inside


def token_labels(argument: str | None) -> list[str] | str:
    """A list of labels (``[the, cat, sat]`` or ``the, cat, sat``), or ``file.py:function`` that returns
    them. Labels are read as strings, whatever they look like: a token ``on`` or ``1e3`` is not YAML's
    ``true`` or a number."""
    text = (argument or "").strip()
    where, sep, name = text.rpartition(":")
    if sep and where.endswith(".py") and name.isidentifier():
        return text
    return opt.name_list_commas(text)


def course_function(directive: SphinxDirective, reference: str) -> str:
    """``file.py:function`` (``:tokens:``, a metric) with the file made relative to the course folder
    (it must be inside)."""
    env = directive.env
    given, _, function = reference.rpartition(":")
    _, absolute = env.relfn2path(given, env.docname)
    env.note_dependency(absolute)
    path = resolve_inside(Path(env.srcdir), Path(absolute), given)
    return f"{path.relative_to(Path(env.srcdir).resolve()).as_posix()}:{function}"


def add_course_file(directive: SphinxDirective, reference: str, files: dict[str, str]) -> None:
    """Add the file of a :func:`course_function` reference and what it imports to a figure's code
    ``files`` (``{path: sha256}``)."""
    srcdir = Path(directive.env.srcdir).resolve()
    path = srcdir / reference.rpartition(":")[0]
    files.setdefault(path.relative_to(srcdir).as_posix(), sha256_text(path.read_text("utf-8")))
    for module in local_imports(path.read_text("utf-8"), path, srcdir):
        directive.env.note_dependency(str(module))
        files.setdefault(module.relative_to(srcdir).as_posix(), sha256_text(module.read_text("utf-8")))


def is_token_id_list(value: Any) -> bool:
    """A non-empty list of integers (booleans are YAML's ``true``, not ids)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in value))


def token_id_list(argument: str | None) -> list[int]:
    """Token ids: ``[5, 3, 9, 5, 3]``, non-negative integers."""
    value = opt.load_yaml((argument or "").strip())
    if not is_token_id_list(value):
        raise ValueError("give token ids as a list of integers, e.g. [5, 3, 9, 5, 3]")
    if any(n < 0 for n in value):
        raise ValueError("token ids are non-negative integers")
    return value
