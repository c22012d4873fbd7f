"""Content and renderer hashes.

A hash is the sha256 of a *canonical* JSON document (sorted keys, no spaces,
UTF-8), so the same inputs give the same name on every machine and Python
version; ``str(options)`` or ``repr`` would not.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SCHEMA_VERSION = 1


def canonical_json(value: Any) -> str:
    """Serialise ``value`` the one way that hashing relies on."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(value: Any) -> str:
    """sha256 hex digest of the canonical JSON of ``value``."""
    return sha256_text(canonical_json(value))
