"""The store of a Sphinx build, as every phase of it opens it.

One build reads each artifact in several phases (deciding what to execute, drawing the pages,
the catalogue's thumbnails, the execution report); the phases share what was read and checked:
the validated files (kept in the environment, so a warm rebuild checks nothing again) and the
parsed artifacts (kept per application, for this process only: a
:class:`~..core.per_app.PerApp` slot).
"""

from __future__ import annotations

from typing import Any

from ..config import Settings, app_of
from ..core.per_app import PerApp
from ..core.state import trusted_of
from .artifacts import ArtifactStore


def build_store(env: Any, conf: Settings) -> ArtifactStore:
    """The artifact store of the build of ``env``, with the build's caches of what was read."""
    return ArtifactStore.for_settings(conf, trusted_of(env), _read(env))


def local_store(env: Any, conf: Settings) -> ArtifactStore:
    """What this machine holds of the store (the folder, or a remote store's cache), with the same
    caches; reading it never goes to the network."""
    return ArtifactStore(conf.store_dir, trusted_of(env), conf.max_result_mb, _read(env))


#: the artifacts parsed by this process, per application
_READ: PerApp[dict[str, Any]] = PerApp(dict)


def _read(env: Any) -> dict[str, Any]:
    return _READ.of(app_of(env))
