"""The file a figure's kept parts are stored in (:mod:`.part_cache`): a line of JSON, then the parts.

The line says what the entry was checked against (the artifact's digest with the project files
it shows, each file's name and sha256), the figure's title, alt text and warnings, how its parts
are split, and the size of each part; the parts follow as they are: the SVG, each extra's and
each detail's HTML with the words the search index reads in it, each file's bytes. A fresh output
folder reads every entry of a course (megabytes, mostly HTML and a big graph's module files), and
parsed as JSON strings those cost more than everything else a look-up does.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any

from .part_keys import FORMAT_VERSION

#: the first bytes of an entry
_MAGIC = b"sphinx-tensorviz kept parts\n"


def encode_entry(header: dict[str, Any], parts: list[bytes]) -> bytes:
    """An entry's file: :data:`_MAGIC`, ``header`` with the parts' sizes as one line of JSON,
    then the parts."""
    line = json.dumps({**header, "parts": [len(part) for part in parts]}).encode("ascii")
    return b"".join([_MAGIC, line, b"\n", *parts])


def decode_entry(raw: bytes) -> tuple[dict[str, Any], list[bytes]] | None:
    """(header, parts) of an entry :func:`encode_entry` made; ``None`` for anything else, or a
    file whose parts do not add up (cut short, written over)."""
    if not raw.startswith(_MAGIC):
        return None
    line, newline, body = raw[len(_MAGIC):].partition(b"\n")
    try:
        header = json.loads(line) if newline else None
    except (ValueError, RecursionError):
        return None
    sizes = header.get("parts") if isinstance(header, dict) else None
    if not (isinstance(sizes, list) and all(type(size) is int and size >= 0 for size in sizes)
            and sum(sizes) == len(body)):
        return None
    parts, start = [], 0
    for size in sizes:
        parts.append(body[start:start + size])
        start += size
    return header, parts


def part_count(entry: dict[str, Any]) -> int | None:
    """How many parts ``entry`` says it has: the SVG, one for a markup extra, two (HTML and words)
    for any other extra and for each detail, one per file; ``None`` if its shape is not this version's."""
    extras, details = entry.get("extras"), entry.get("details")
    if not (isinstance(extras, list) and all(isinstance(e, list) and len(e) == 2 and all(type(f) is bool for f in e)
                                             for e in extras)
            and isinstance(details, list) and all(type(math) is bool for math in details)
            and isinstance(entry.get("outputs"), list)):
        return None
    return 1 + sum(1 if is_markup else 2 for is_markup, _ in extras) + 2 * len(details) + len(entry["outputs"])


def well_formed(entry: dict[str, Any], parts: list[bytes]) -> bool:
    """Whether a decoded entry is one of this version, with a part for each piece and file it
    names, and only plain relative paths (inside the output folder on every system)."""
    if entry.get("version") != FORMAT_VERSION:
        return False
    if not (isinstance(entry.get("inputsDigest"), str) and isinstance(entry.get("title"), str)
            and isinstance(entry.get("alt"), str) and isinstance(entry.get("warnings"), list)
            and all(isinstance(w, list) and len(w) == 2 and all(isinstance(f, str) for f in w)
                    for w in entry["warnings"])
            and part_count(entry) == len(parts)):
        return False
    for item in entry["outputs"]:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(part, str) for part in item)):
            return False
        relative = PurePosixPath(item[0])
        plain_path = not relative.is_absolute() and ".." not in relative.parts and bool(relative.parts)
        if not plain_path or "\\" in item[0] or ":" in item[0]:
            return False  # only a plain relative path stays inside the output folder on every system
    return True
