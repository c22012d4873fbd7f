"""Artifact files this machine has validated already, remembered by the sha256 of their bytes.

Checking an artifact against the JSON Schema (and the consistency checks the schema cannot say)
costs more than everything else a cached build does with it, and a fresh output folder (a clean
build, a CI job, a second checkout) used to pay it again for every file. A file whose exact
bytes passed once under the same checks passes again, so the build remembers the digest of each
file that passed, in ``~/.cache/sphinx-tensorviz/validated/<checks>/``; ``<checks>`` names the
schema and the checking code, so a new version validates everything again. The checks that are
cheap and tie a file to its name (the content hash, the request's digest) run on every read.

Lesson code running without the sandbox runs as your user and could write here, as it could
write anywhere you can; inside the sandbox the cache is not writable (see *What runs where*).
"""

from __future__ import annotations

import hashlib
import os
from functools import cache
from importlib import resources
from pathlib import Path

from ..core.locations import cache_home


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
    return _marker(data).is_file()


def remember_passed(data: bytes) -> None:
    """Note that these bytes passed (a cache that cannot be written only costs a check next time)."""
    marker = _marker(data)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        with open(marker, "a", encoding="utf-8"):
            pass
        os.chmod(marker, 0o644)
    except OSError:
        pass
