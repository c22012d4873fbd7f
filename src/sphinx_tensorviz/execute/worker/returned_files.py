"""Files a kind's worker entry returns beside its result (e.g. a model's weights), written here.

The entry returns ``{"files": {"<sha256>.<extension>": bytes}}``; the worker checks each name
against its bytes and writes it into ``files/`` of the job's folder, which the build reads back
(:mod:`..returned`) before it removes the folder. The result lists each file as ``{name, size}``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...core.protocol import MAX_RETURNED_FILES, RETURNED_FILE, ReturnedFile
from .loader import BadResult

#: the folder, beside ``result.json``, that holds the returned files
RETURNED_FOLDER = "files"


def write_returned_files(returned: Any, folder: Path | None) -> tuple[ReturnedFile, ...]:
    """Write ``{name: bytes}`` into ``folder`` and list them; a bad name or a file without a folder to
    go to is the kind's bug, reported as a bad result."""
    if not returned:
        return ()
    if not isinstance(returned, dict) or len(returned) > MAX_RETURNED_FILES:
        raise BadResult(f"a kind returns its files as {{name: bytes}}, at most {MAX_RETURNED_FILES} of them")
    if folder is None:
        raise BadResult("this worker has nowhere to write the files its kind returns")
    folder.mkdir(exist_ok=True)
    files = []
    for name, content in sorted(returned.items()):
        if not isinstance(name, str) or not RETURNED_FILE.fullmatch(name) or not isinstance(content, bytes):
            raise BadResult(f"a returned file must be named <sha256>.<extension> and be bytes: {name!r}")
        if hashlib.sha256(content).hexdigest() != name.partition(".")[0]:
            raise BadResult(f"the returned file {name} is not named by the sha256 of its bytes")
        (folder / name).write_bytes(content)
        files.append(ReturnedFile(name, len(content)))
    return tuple(files)
