"""Where things are kept: the artifact store (a folder or a URL), this machine's caches, and the
project files an artifact names.

Shared by the configuration (which resolves ``tensorviz_artifact_store``), the store and the
execution caches, so that every one of them agrees on what is remote and where caches live; and
by everything that shows a project file an artifact names (downloads, source panels, kept
figures), so they agree on which of those files may be shown.
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


def recorded_project_file(srcdir: Path, relative: str, recorded: str | None) -> Path | None:
    """The project file ``relative`` if it resolves inside ``srcdir`` and its text still has the
    ``recorded`` sha256, else ``None``. The name comes from an artifact, data from the repository:
    nothing outside the project, and nothing changed since the run, is shown as what it ran."""
    path = (srcdir / relative).resolve()
    if not path.is_relative_to(srcdir.resolve()) or not path.is_file():
        return None
    return path if recorded == sha256_text(path.read_text("utf-8")) else None
