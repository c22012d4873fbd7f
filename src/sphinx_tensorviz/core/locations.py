"""Where things are kept: the artifact store (a folder or a URL) and this machine's caches.

Shared by the configuration (which resolves ``tensorviz_artifact_store``), the store and the
execution caches, so that every one of them agrees on what is remote and where caches live.
"""

from __future__ import annotations

import os
from pathlib import Path

from .hashing import sha256_text


def is_url(location: str) -> bool:
    """``True`` for ``scheme://...`` other than ``file://`` (a local folder)."""
    return "://" in location and not location.startswith("file://")


def cache_home() -> Path:
    """This user's cache folder for sphinx-tensorviz (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sphinx-tensorviz"


def default_cache_dir(url: str) -> Path:
    """The machine-local cache of the store at ``url``: one folder per URL under the user's cache."""
    return (cache_home() / "stores" / sha256_text(url.rstrip("/"))[:16]).resolve()
