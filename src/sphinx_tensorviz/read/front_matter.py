"""Option values as a MyST author wrote them in a directive's ``---`` front matter.

myst-parser reads the front matter with a small tokenizer of its own, not as YAML: a value
written on the lines *under* its key (a YAML block list or mapping) arrives folded into one line,
``- text: Flatter correct: true - text: Sharper``, which is no longer the YAML it was. A one-line
or a multi-line flow value (``[{...},`` then ``{...}]``) folds into the same YAML, so only block
values are lost. The directive's ``block_text`` still holds the lines as written; this module
gives back the block value of each such key, dedented, for the option's converter to read.
"""

from __future__ import annotations

import re
import textwrap

#: a top-level key of the front matter, as myst-parser reads one (``name:`` at column 0)
_KEY = re.compile(r"^([A-Za-z0-9][\w.-]*)\s*:(.*)$")


def front_matter(block_text: str) -> list[str] | None:
    """The lines between the ``---`` delimiters of a MyST directive, dedented as myst-parser does;
    ``None`` when the directive has no front matter (``:key:`` lines, or reStructuredText)."""
    lines = block_text.splitlines()[1:]  # the first line is the fence and the directive's name
    if not lines or not lines[0].startswith("---"):
        return None
    inside: list[str] = []
    for line in lines[1:]:
        if line.startswith("---"):
            break
        inside.append(line)
    else:  # no closing delimiter: myst-parser reads every line up to the closing fence as options
        inside = inside[:-1]
    return textwrap.dedent("\n".join(inside)).splitlines()


def block_values(block_text: str) -> dict[str, str]:
    """``{option: YAML text}`` for each front-matter key whose value starts on the next line."""
    lines = front_matter(block_text)
    if lines is None:
        return {}
    entries: list[tuple[str, str, list[str]]] = []
    for line in lines:
        match = _KEY.match(line)
        if match is not None:
            entries.append((match.group(1), match.group(2), []))
        elif entries:
            entries[-1][2].append(line)
    values = {}
    for key, first, rest in entries:
        if first.split("#", 1)[0].strip() or not any(line.strip() for line in rest):
            continue  # a value on the key's own line (myst-parser's folding keeps its meaning), or none
        values[key] = textwrap.dedent("\n".join(rest)).strip("\n")
    return values


def as_written(options: dict[str, str | None], block_text: str) -> dict[str, str | None]:
    """A directive's raw option values, with each front-matter block value as the author wrote it."""
    written = block_values(block_text)
    return {name: written.get(name, raw) for name, raw in options.items()}


#: added to an option's YAML error when the rest of its value was read as the directive's body
CONTINUED = ("\n(MyST reads only the lines that start with ':' as options, so the lines that continue "
             "this value became the directive's body: write a value over several lines in the directive's "
             "--- front matter instead)")


def continuation_hint(value: str | None, block_text: str, body: str, source: str | None) -> str:
    """:data:`CONTINUED` (on a line of its own, after YAML's caret diagram) for a ``:key:`` value of a
    MyST directive that opens more brackets than it closes, when the directive's body closes them
    (its first lines are where the value went), else "": a typo such as ``{n: [1, 2}`` above code
    in the body is not a value continued there."""
    depth = _depth(value or "")
    if depth <= 0 or not (source or "").endswith(".md") or front_matter(block_text) is not None:
        return ""
    for line in body.splitlines():
        depth += _depth(line)
        if depth <= 0:
            return CONTINUED
    return ""


def _depth(text: str) -> int:
    """How many more brackets ``text`` opens than it closes."""
    return text.count("[") + text.count("{") - text.count("]") - text.count("}")
