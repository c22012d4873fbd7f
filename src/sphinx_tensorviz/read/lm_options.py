"""What directives that run a language model over token ids share: the ``:inputs:`` token ids, the
``:tokens:`` labels, and options that name a ``file.py:function`` of the course (``:tokens:``,
``:vocabulary:``, ``:unembed:``, a metric), whose files a change must re-run.

Shared by ``tv-attention``, ``tv-lens`` and ``tv-patch`` (features never import each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.util.docutils import SphinxDirective

from ..core.hashing import sha256_text
from . import options as opt
from .sources import local_imports, resolve_inside
from .trained import use_model


def is_token_id_list(value: Any) -> bool:
    """A non-empty list of integers (booleans are YAML's ``true``, not ids)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in value))


def token_id_list(argument: str | None) -> list[int]:
    """Token ids: ``[5, 3, 9, 5, 3]``, non-negative integers (``tv-patch``'s ``:clean:``/``:corrupted:``)."""
    value = opt.load_yaml((argument or "").strip())
    if not is_token_id_list(value):
        raise ValueError("give token ids as a list of integers, e.g. [5, 3, 9, 5, 3]")
    if any(n < 0 for n in value):
        raise ValueError("token ids are non-negative integers")
    return value


def token_inputs(argument: str | None) -> list[int] | list[dict[str, Any]]:
    """Token ids (``[5, 3, 9, 5, 3]``), or the input specs ``tv-graph`` takes."""
    if is_token_id_list(opt.load_yaml((argument or "").strip())):
        return token_id_list(argument)
    return opt.input_specs(argument)


def is_function_reference(text: str) -> bool:
    """``file.py:function``: a function of a file of the course."""
    where, sep, name = text.rpartition(":")
    return bool(sep) and where.endswith(".py") and name.isidentifier()


def token_labels(argument: str | None) -> list[str] | str:
    """A list of labels (``[the, cat, sat]`` or ``the, cat, sat``), or ``file.py:function`` that returns
    them. Labels are read as strings, whatever they look like: a token ``on`` or ``1e3`` is not YAML's
    ``true`` or a number."""
    text = (argument or "").strip()
    return text if is_function_reference(text) else opt.name_list_commas(text)


def function_reference(argument: str | None) -> str:
    """``file.py:function`` (nothing else)."""
    text = (argument or "").strip()
    if not is_function_reference(text):
        raise ValueError(f"give file.py:function, got {text!r}")
    return text


def course_function(directive: SphinxDirective, reference: str) -> str:
    """``file.py:function`` with the file made relative to the course folder (it must be inside)."""
    given, _, function = reference.rpartition(":")
    _, absolute = directive.env.relfn2path(given, directive.env.docname)
    directive.env.note_dependency(absolute)
    path = resolve_inside(Path(directive.env.srcdir), Path(absolute), given)
    return f"{path.relative_to(Path(directive.env.srcdir).resolve()).as_posix()}:{function}"


def add_function_files(directive: SphinxDirective, files: dict[str, str], reference: str) -> None:
    """The file of a :func:`course_function` reference and the course files it imports, into the
    hashed ``files``, so that editing them re-runs the figure."""
    srcdir = Path(directive.env.srcdir).resolve()
    path = srcdir / reference.rpartition(":")[0]
    files.setdefault(path.relative_to(srcdir).as_posix(), sha256_text(path.read_text("utf-8")))
    for module in local_imports(path.read_text("utf-8"), path, srcdir):
        directive.env.note_dependency(str(module))
        files.setdefault(module.relative_to(srcdir).as_posix(), sha256_text(module.read_text("utf-8")))


def take_model(directive: SphinxDirective, values: dict[str, Any]) -> None:
    """``:model:`` (``file.py:factory`` or a training's ``@name``) made the figure's code, and its
    framework (``torch`` unless ``:backend:`` says ``jax``): what every kind that runs a language model
    over token ids reads the same way."""
    if "model" not in values:
        raise ValueError("name the model with :model: path/to/file.py:factory")
    if "source" in values or "function" in values:
        raise ValueError(":model: names the code; leave out :source: and :function:")
    values["source"], values["function"] = use_model(directive, values, values.pop("model"))
    values.setdefault("backend", "torch")
    if values["backend"] == "numpy":
        raise ValueError(":backend: is torch or jax (the model's framework)")
