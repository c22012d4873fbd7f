"""Finding a training run's snapshot by step, and reading its weights back checked.

What a later figure that uses a trained model (``@name:step``) needs of a stored run: the snapshot
record of a step (the last one when none is named), with the valid steps in the message when there
is no such step, and the file's bytes, read from ``<store>/weights/`` as a regular file no larger
than its recorded size and hashing to its recorded sha256 (a store is a folder anyone can write).
Build side: no framework is imported here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...store.files import read_regular
from ...store.returned_files import returned_file_path


def find_snapshot(data: dict[str, Any], step: int | None = None) -> dict[str, Any]:
    """The snapshot record of ``step`` (``None``: the last); ``LookupError`` names the valid steps."""
    kept = data.get("snapshots") or []
    if not kept:
        raise LookupError("the training run kept no snapshots (give it :snapshots:)")
    if step is None:
        return kept[-1]
    for snapshot in kept:
        if snapshot["step"] == step:
            return snapshot
    raise LookupError(f"no snapshot at step {step}; the run kept steps {', '.join(str(s['step']) for s in kept)}")


def read_snapshot(store_root: Path, snapshot: dict[str, Any]) -> bytes:
    """The safetensors bytes of ``snapshot``; ``OSError`` when they are missing or not the recorded ones."""
    path = returned_file_path(store_root, f"{snapshot['sha256']}.safetensors")
    content = read_regular(path, int(snapshot["size"]))
    if len(content) != snapshot["size"] or hashlib.sha256(content).hexdigest() != snapshot["sha256"]:
        raise OSError(f"{path.name} in the store is not the file the training run recorded")
    return content
