"""A shared artifact store behind fsspec (S3, GCS, Azure, read-only HTTPS), read through a local cache.

The remote store has the layout of the local one: ``<hash>.json`` at the top and
``failures/<hash>.json`` beside them, so a folder can be copied up or down as it is
(``tensorviz push/pull``). Nothing here knows about a cloud: fsspec picks the file
system from the URL's scheme, and credentials and endpoints come from that file
system's usual configuration (``AWS_ENDPOINT_URL``, ``~/.aws``, ``GOOGLE_APPLICATION_CREDENTIALS``,
...), never from ``conf.py``.

:class:`RemoteStore` *is* a local :class:`~.artifacts.ArtifactStore`, rooted at a
machine-local cache folder, with reads falling through to the remote store and
writes going to both. So the cache keeps everything the local store gives: the
ledger and lock that let :mod:`.guard` tell a build's writes from lesson code's,
validation of every file before use (a remote file is checked exactly like a
local one: schema, name = ``contentHash`` = hash of its request), and the
``trusted`` signatures that let warm builds skip the check. An artifact's name is
the hash of its request, so a cached copy never goes stale: only missing files
are fetched. Failure records are not cached, since another machine may replace or clear them.

The cache may save a download, never an upload: a bucket can lose what this machine holds (it was
recreated, or a test server restarted), and another machine then finds nothing. So a build ends
with :meth:`RemoteStore.upload_missing`: one listing of the store, and every artifact the build
used that the listing lacks is uploaded from the cache.

Writes are one ``PUT`` of the whole object (atomic on object stores: a reader sees
the old object or the new one); writing the same hash twice stores an equally
valid artifact, so concurrent builds need no lock across machines.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..config import reset
from ..core.locations import default_cache_dir, is_url
from ..core.words import plural
from ..warnings_ import Subtype, warn
from .artifacts import (
    ArtifactStore,
    StoreProblem,
    _check_hash,
    _is_hex,
    dump_json,
    schema_errors,
    usable_failure,
)
from .files import is_regular, read_regular
from .signing import KEY_VARIABLE, sign, signature_problem, signing_key

#: schemes fsspec can only read
READ_ONLY = ("http", "https")
_HASH_LEN = 64
#: seconds a store that could not be reached is not asked again (each try may cost seconds of retries)
RETRY_AFTER = 60.0
#: url -> (when, why) of stores found unreachable in this process
_DOWN: dict[str, tuple[float, str]] = {}


class RemoteName(str):
    """An object's URL where messages expect a path: ``str()`` is the URL, ``.name`` the file name
    (a :class:`~pathlib.Path` would fold ``s3://`` into ``s3:/``)."""

    @property
    def name(self) -> str:
        return self.rsplit("/", 1)[-1]


class ReadOnlyStore(OSError):
    """A write to a store that can only be read (an HTTPS mirror)."""


class StoreUnreachable(OSError):
    """The remote store did not answer (no network, wrong endpoint, connection refused)."""


def filesystem(url: str) -> tuple[Any, str]:
    """(fsspec file system, path inside it) for ``url``; raises ImportError naming the missing extra."""
    try:
        import fsspec.core
    except ImportError:
        raise ImportError("a remote tensorviz_artifact_store needs fsspec: pip install 'sphinx-tensorviz[s3]' "
                          "(or [gcs], [azure], [http])") from None
    try:
        fs, path = fsspec.core.url_to_fs(url)
    except ImportError as exc:
        raise ImportError(f"{url}: {exc}") from None
    return fs, path.rstrip("/")


def check_store_config(app: Any, config: Any) -> None:
    """``config-inited``: a remote store whose optional packages are missing falls back to the local
    folder, loudly; signatures are only for remote stores, and need the key."""
    location = str(config.tensorviz_artifact_store or "")
    if is_url(location):
        try:
            filesystem(location)
        except (ImportError, ValueError) as exc:
            reset(config, "tensorviz_artifact_store", f"cannot be opened ({exc})")
    if config.tensorviz_require_signature and not is_url(location):
        reset(config, "tensorviz_require_signature", "applies to remote stores only (tensorviz_artifact_store = URL)")
    elif config.tensorviz_require_signature and not signing_key():
        warn(f"tensorviz_require_signature is on but {KEY_VARIABLE} is not set: every remote artifact will be "
             "refused. Set the key in the environment of this build", Subtype.config)


def open_store(location: str, cache: Path | None = None, require_signature: bool = False) -> ArtifactStore:
    """The store at ``location``: a folder, or a URL (cached in ``cache`` or the default cache)."""
    if is_url(location):
        return RemoteStore(location, cache or default_cache_dir(location), require_signature=require_signature)
    return ArtifactStore(Path(location.removeprefix("file://")))


class RemoteStore(ArtifactStore):
    """Artifacts and failure records at ``url``, cached in the local folder ``cache``."""

    def __init__(self, url: str, cache: Path, trusted: dict[str, list[int]] | None = None,
                 max_mb: float | None = None, fs: Any = None, require_signature: bool = False,
                 read: dict[str, tuple[list[int], dict[str, Any]]] | None = None) -> None:
        super().__init__(cache, trusted, max_mb, read)
        self.url = url.rstrip("/")
        self.require_signature = require_signature  # refuse artifacts not signed with the key (signing.py)
        self._prefetched: dict[str, bytes] = {}
        self.read_only = self.url.split("://", 1)[0].lower() in READ_ONLY
        self._fs, self._base = (fs, self.url.split("://", 1)[1]) if fs is not None else filesystem(self.url)

    @property
    def location(self) -> str:
        return self.url

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``self._fs.<method>(...)``; a store that does not answer raises :class:`StoreUnreachable`
        now and, without asking again, for the next ``RETRY_AFTER`` seconds."""
        down = _DOWN.get(self.url)
        if down and time.monotonic() - down[0] < RETRY_AFTER:
            raise StoreUnreachable(down[1])
        try:
            return getattr(self._fs, method)(*args, **kwargs)
        except OSError as exc:
            if not isinstance(exc, (ConnectionError, TimeoutError)):
                raise  # not found, permission denied, ...: an answer from the store
            problem: Exception = exc
        except Exception as exc:  # noqa: BLE001 - the file system's own errors (botocore, aiohttp, ...)
            problem = exc
        message = f"the store {self.url} cannot be used ({type(problem).__name__}: {problem})"
        _DOWN[self.url] = (time.monotonic(), message)
        raise StoreUnreachable(message) from problem

    def _remote(self, kind: str, content_hash: str) -> str:
        _check_hash(content_hash)
        if kind == "signature":
            return f"{self._base}/signatures/{content_hash}.sig"
        folder = self._base if kind == "artifact" else f"{self._base}/failures"
        return f"{folder}/{content_hash}.json"

    def shown(self, kind: str, content_hash: str) -> Path:
        """The object's URL, path-like for messages (``.name`` is the file name)."""
        return RemoteName(self.url + self._remote(kind, content_hash)[len(self._base):])  # type: ignore[return-value]

    # -- listing -------------------------------------------------------------
    def _list(self, folder: str) -> list[str]:
        return sorted(self._listing(folder))

    def _listing(self, folder: str) -> dict[str, int | None]:
        """``{hash: size in bytes}`` of the objects in ``folder`` (``None``: the store gives no size)."""
        self._fs.invalidate_cache()  # another build may have written since
        try:
            entries = self._call("ls", folder, detail=True)
        except (FileNotFoundError, NotImplementedError):
            return {}
        except OSError as exc:
            raise OSError(f"cannot list the artifact store {self.url}: {exc}") from exc
        found: dict[str, int | None] = {}
        for entry in entries:
            name = str(entry.get("name", "") if isinstance(entry, dict) else entry).rstrip("/")
            stem = name.rsplit("/", 1)[-1].removesuffix(".json")
            if name.endswith(".json") and len(stem) == _HASH_LEN and _is_hex(stem):
                size = entry.get("size") if isinstance(entry, dict) else None
                found[stem] = size if isinstance(size, int) else None
        return found

    def artifact_hashes(self) -> list[str]:
        return self._list(self._base)

    def failure_hashes(self) -> list[str]:
        return self._list(f"{self._base}/failures")

    def has_artifact(self, content_hash: str) -> bool:
        if super().has_artifact(content_hash):
            return True
        try:
            return bool(self._call("exists", self._remote("artifact", content_hash)))
        except OSError:
            return False

    def size_of(self, kind: str, content_hash: str) -> int | None:
        if kind == "artifact" and is_regular(self.artifact_path(content_hash)):
            return self.artifact_path(content_hash).stat().st_size  # the cached copy has the object's bytes
        try:
            return int(self._call("size", self._remote(kind, content_hash)))
        except (OSError, TypeError, ValueError):
            return None

    # -- reading -------------------------------------------------------------
    def prefetch(self, hashes: Iterable[str]) -> None:
        """Fetch the artifacts among ``hashes`` that are not cached, concurrently (one request each, in
        flight together), and put the valid ones in the cache, so that reading them next costs no round
        trip. Absent and invalid ones are left for :meth:`read_artifact` to report."""
        wanted = {self._remote("artifact", h): h for h in set(hashes) if not is_regular(self.artifact_path(h))}
        if not wanted:
            return
        try:
            found = self._call("cat", sorted(wanted), on_error="omit")
        except OSError:
            return  # read one by one later, with the error reported per figure
        for path, data in found.items():
            if path in wanted and isinstance(data, (bytes, bytearray)):
                self._prefetched[wanted[path]] = bytes(data)
                self.read_artifact(wanted[path])  # checked and cached like any fetched artifact

    def _fetch(self, kind: str, content_hash: str) -> bytes | None:
        """The remote object's bytes, ``None`` when absent; OSError when the store cannot be read."""
        if kind == "artifact" and content_hash in self._prefetched:
            return self._prefetched.pop(content_hash)
        try:
            return bytes(self._call("cat_file", self._remote(kind, content_hash)))
        except FileNotFoundError:
            return None

    def read_artifact(self, content_hash: str) -> dict[str, Any] | StoreProblem | None:
        cached = self.artifact_path(content_hash)
        if is_regular(cached):
            found = super().read_artifact(content_hash)
            if not isinstance(found, StoreProblem) and self._cached_signature_ok(content_hash):
                return found
            cached.unlink(missing_ok=True)  # a bad or unsigned cached copy: fetch the remote one again
        shown = self.shown("artifact", content_hash)
        try:
            data = self._fetch("artifact", content_hash)
        except OSError as exc:  # a result kept in memory because the store failed is still good
            return self._held("artifact", content_hash) or StoreProblem(shown, f"cannot be read ({exc})")
        if data is None:
            return self._held("artifact", content_hash)
        if self.max_mb is not None and len(data) > self.max_mb * 1024 * 1024:
            return StoreProblem(shown, f"is {len(data):,} bytes, over tensorviz_max_result_mb = {self.max_mb:g}")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return StoreProblem(shown, "is not UTF-8 text")
        signature = None
        if self.require_signature:
            try:
                signature = self._fetch("signature", content_hash)
            except OSError as exc:
                return StoreProblem(shown, f"cannot be checked: its signature cannot be read ({exc})")
            problem = signature_problem(signing_key(), data, signature)
            if problem:
                return StoreProblem(shown, problem)
        try:
            with self._lock():
                self._write(cached, text)
                if signature is not None:
                    self._write(self._cached_signature(content_hash), signature.decode("ascii", "replace"))
        except OSError as exc:
            return StoreProblem(shown, f"cannot be cached in {self.root} ({exc})")
        found = super().read_artifact(content_hash)  # every check a local file gets
        if isinstance(found, StoreProblem):
            cached.unlink(missing_ok=True)
            return StoreProblem(shown, found.reason)
        return found

    @property
    def uploads(self) -> bool:
        return not self.read_only

    def upload_missing(self, hashes: Iterable[str]) -> list[str]:
        """Upload every artifact among ``hashes`` that the store's listing lacks, or lists at another size
        than this machine's copy (an object cut short: another machine would find it unusable, while
        this one reads its cache), as this machine's cache holds it (the bytes that were checked when
        read), signed when the signing key is set.

        One listing, whatever the number of hashes. Raises OSError when the store cannot be listed or
        written; a read-only mirror is skipped (it is filled by writing to the store it mirrors).
        """
        if not self.uploads:
            return []
        listed = self.listing()
        key = signing_key()
        uploaded = []
        for content_hash in sorted(set(hashes)):
            data = self._checked_bytes(content_hash) if self.lacks(content_hash, listed) else None
            if data is None:
                continue
            if key is not None:  # the signature first, as write_artifact does
                self._put("signature", content_hash, sign(key, data))
            self._put("artifact", content_hash, data.decode("utf-8"))
            uploaded.append(content_hash)
        return uploaded

    def listing(self) -> dict[str, int | None]:
        return self._listing(self._base)

    def lacks(self, content_hash: str, listing: dict[str, int | None]) -> str | None:
        size = listing.get(content_hash, -1)  # -1: not listed
        if size is None:
            return None  # listed, and the store gives no sizes: taken as intact
        data = self._checked_bytes(content_hash)
        if data is None or size == len(data):
            return None  # not held here (nothing to give), or listed at the size of the copy checked here
        if size < 0:
            return f"cached on this machine but not in the store {self.location}"
        return (f"the store {self.location} holds {plural(size, 'byte')} of it, this machine's checked copy "
                f"{len(data):,} (an object cut short)")

    def _checked_bytes(self, content_hash: str) -> bytes | None:
        """The artifact's bytes as they were checked in this process (the cached file, if unchanged since,
        else the validated document's JSON), ``None`` when this process did not read it."""
        known = self.read.get(content_hash)
        held = self._held("artifact", content_hash)
        if known is None:
            return dump_json(held).encode("utf-8") if held is not None else None
        try:
            data = read_regular(self.artifact_path(content_hash), self.read_limit)
        except OSError:
            data = b""
        return data if hashlib.sha256(data).hexdigest() == known[2] else dump_json(known[1]).encode("utf-8")

    def _cached_signature(self, content_hash: str) -> Path:
        return self.root / "signatures" / f"{content_hash}.sig"

    def _cached_signature_ok(self, content_hash: str) -> bool:
        """Without tensorviz_require_signature always; with it, when the cached copy's signature checks."""
        if not self.require_signature:
            return True
        try:
            data = read_regular(self.artifact_path(content_hash), self.read_limit)
            signature = read_regular(self._cached_signature(content_hash), 4096)
        except OSError:
            return False
        return signature_problem(signing_key(), data, signature) is None

    def check_failure(self, content_hash: str) -> dict[str, Any] | None:
        try:
            data = self._fetch("failure", content_hash)
            record = json.loads(data) if data is not None else self._held("failure", content_hash)
        except OSError:
            record = self._held("failure", content_hash)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            return None
        return usable_failure(content_hash, record)

    # -- writing -------------------------------------------------------------
    def _put(self, kind: str, content_hash: str, text: str) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.url} is read-only (HTTP); write to the store it mirrors")
        self._call("pipe_file", self._remote(kind, content_hash), text.encode("utf-8"))

    def _remove(self, kind: str, content_hash: str) -> None:
        if self.read_only:
            raise ReadOnlyStore(f"{self.url} is read-only (HTTP)")
        try:
            self._call("rm_file", self._remote(kind, content_hash))
        except FileNotFoundError:
            pass

    def write_artifact(self, artifact: dict[str, Any]) -> Path:
        errors = schema_errors(artifact)
        if errors:
            raise ValueError("refusing to store an invalid artifact: " + "; ".join(errors[:3]))
        content_hash = artifact["contentHash"]
        text = dump_json(artifact)
        key = signing_key()
        if key is not None:  # the signature first: a reader never sees the new artifact unsigned
            self._put("signature", content_hash, sign(key, text.encode("utf-8")))
        self._put("artifact", content_hash, text)
        self._remove("failure", content_hash)
        path = self.artifact_path(content_hash)
        with self._lock():
            self._write(path, text)
        return path

    def write_failure(self, content_hash: str, record: dict[str, Any]) -> None:
        self._put("failure", content_hash, dump_json({"contentHash": content_hash, **record}))

    def delete_artifact(self, content_hash: str) -> None:
        self._remove("artifact", content_hash)
        self._remove("signature", content_hash)
        super().delete_artifact(content_hash)

    def delete_failure(self, content_hash: str) -> None:
        self._remove("failure", content_hash)
