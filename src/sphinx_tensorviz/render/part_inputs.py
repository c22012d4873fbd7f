"""What a figure's kept parts (:mod:`.part_cache`) are checked against on every use: the bytes of
the artifact they were drawn from and of the project files it names.

A figure shows its artifact's printed output and offers the file itself; its downloads and source
panels show the project files still as recorded, byte for byte. Neither changes the content hash
(a re-executed run, a checkout that changed line endings), so both are checked, not named.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..config import app_of
from ..core.hashing import digest
from ..core.locations import recorded_project_file
from ..core.per_app import PerApp
from .page import Page


def inputs_digest(page: Page, artifacts: Sequence[dict[str, Any]]) -> str | None:
    """What ``artifacts`` are now (their stored bytes) and the state of the project files they
    name; ``None`` if one is not a stored artifact."""
    state = []
    for artifact in artifacts:
        content_hash = artifact.get("contentHash")
        if not isinstance(content_hash, str):
            return None
        stored = page.store.stored_sha256(content_hash, artifact)
        files = artifact.get("request", {}).get("files", {})
        state.append([content_hash, stored, [[name, *_project_file(page, name, sha256)]
                                             for name, sha256 in sorted(files.items()) if name != "<inline>"]])
    return digest(state)


#: what :func:`_project_file` found, per application, by the file's identity, size and time
_PROJECT_FILES: PerApp[dict[tuple[Any, ...], tuple[bool, str | None]]] = PerApp(dict)


def _project_file(page: Page, relative: str, recorded: str) -> tuple[bool, str | None]:
    """Whether the downloads and source panels show the project file ``relative``
    (:func:`.locations.recorded_project_file`), and the sha256 of its bytes (what a download
    copies: the same text with other line endings is another file). Known by the file's identity,
    size and time for the rest of the build (the path is resolved on a miss only: a link that points
    elsewhere points at another inode)."""
    path = page.ctx.srcdir / relative
    try:
        stat = path.stat()
    except OSError:
        return False, None
    seen = _PROJECT_FILES.of(app_of(page.env))
    signature = (str(path), stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    if signature not in seen:
        try:
            shown = recorded_project_file(page.ctx.srcdir, relative, recorded)
            seen[signature] = (True, hashlib.sha256(shown.read_bytes()).hexdigest()) if shown else (False, None)
        except (OSError, UnicodeDecodeError):
            seen[signature] = (False, None)
    return seen[signature]
