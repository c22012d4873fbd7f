"""Reading back the files a worker returned (:mod:`.worker.returned_files`), before its folder goes.

The worker ran untrusted code, which may have replaced a file, linked it elsewhere or grown it: each
file is read as a regular file no larger than the size the result lists, and must hash to its name.
The bytes travel in the job's :class:`~.runner.Outcome` (a Dask task's outcome comes back the same
way) until the build moves them into the store (:mod:`..store.returned_files`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..core.protocol import Failure, FailureKind, Result, Success
from ..store.files import read_regular
from .worker.returned_files import RETURNED_FOLDER


def read_returned(job_dir: Path, result: Result) -> tuple[Result, dict[str, bytes]]:
    """``(result, {name: bytes})``; a file that is missing or not what the result says turns the
    result into a ``bad_result`` failure (the artifact would name weights nobody has)."""
    if not isinstance(result, Success) or not result.files:
        return result, {}
    found: dict[str, bytes] = {}
    for listed in result.files:
        try:
            content = read_regular(job_dir / RETURNED_FOLDER / listed.name, listed.size)
        except OSError as exc:
            return _refused(result, f"{listed.name} cannot be read back ({exc})"), {}
        if len(content) != listed.size or hashlib.sha256(content).hexdigest() != listed.sha256:
            return _refused(result, f"{listed.name} changed after the worker listed it"), {}
        found[listed.name] = content
    return result, found


def _refused(result: Success, why: str) -> Failure:
    return Failure(FailureKind.bad_result, f"a file the worker returned is refused: {why}", stdout=result.stdout,
                   notes=result.notes, execution=result.execution, stderr=result.stderr)
