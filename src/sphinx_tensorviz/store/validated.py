"""Artifact files this machine has validated already, remembered by the sha256 of their bytes.

Checking an artifact against the JSON Schema (and the consistency checks the schema cannot say)
costs more than everything else a cached build does with it, and a fresh output folder (a clean
build, a CI job, a second checkout) used to pay it again for every file. A file whose exact
bytes passed once under the same checks passes again, so the build remembers the digest of each
file that passed, in ``~/.cache/sphinx-tensorviz/validated/<checks>/``; ``<checks>`` names the
schema and the checking code, so a new version validates everything again. The checks that are
cheap and tie a file to its name (the content hash, the request's digest) run on every read.

Lesson code running without the sandbox runs as your user and could write here, as it could
write anywhere you can; inside the sandbox the cache is not writable (see *What runs where*). A
marker is never used through a link (a restored CI cache can hold links): a link vouches for
nothing, and is replaced, never chmod'ed through, when the file passes.
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib import resources
from pathlib import Path

from ..core.locations import cache_home
from .files import is_regular


@cache
def checks_fingerprint() -> str:
    """Names the checks a file passed: the shipped schema and the code that checks artifacts."""
    schema = resources.files("sphinx_tensorviz.store").joinpath("schemas/artifact.schema.json").read_bytes()
    code = Path(__file__).resolve().with_name("schema.py").read_bytes()
    return hashlib.sha256(schema + b"\0" + code).hexdigest()[:16]


def _marker(data: bytes) -> Path:
    digest = hashlib.sha256(data).hexdigest()
    return cache_home() / "validated" / checks_fingerprint() / digest[:2] / digest


def passed_before(data: bytes) -> bool:
    """Whether these exact bytes passed the current checks on this machine."""
    return is_regular(_marker(data))  # the entry itself: a link vouches for nothing


def remember_passed(data: bytes) -> None:
    """Note that these bytes passed (a cache that cannot be written only costs a check next time)."""
    marker = _marker(data)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(marker) and not is_regular(marker):
            marker.unlink()  # a link (to a private file: it would be chmod'ed 0644) or a FIFO: not ours
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(fd, 0o644)
        finally:
            os.close(fd)
    except OSError:
        pass
