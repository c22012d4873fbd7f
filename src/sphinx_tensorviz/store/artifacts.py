"""The artifact store: one pretty-printed JSON file per execution, meant to be committed.

Files are named ``<contentHash>.json``. Writes go through a temporary file and
``os.replace`` under a :class:`filelock.FileLock`, so a crash or a parallel
build never leaves a half-written artifact. Reading validates against the
shipped JSON Schema and checks that the content matches the file name; anything
else is reported as a :class:`StoreProblem` and treated as a miss.

Failures are recorded beside the artifacts in ``failures/`` (git-ignored), so
identical failing code is not re-run on every build while a fixed one (a new
hash) runs again. Every write is also noted in ``failures/.ledger`` (name and
SHA-256), so a file that appears in the store while lesson code runs can be told
from one a concurrent build wrote (see :mod:`.guard`).

A store that cannot be written (read-only checkout, full disk) does not stop the build:
:meth:`ArtifactStore.hold` keeps the document in memory for this process, and reading finds it there.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any

from ..core.hashing import digest
from .files import Refused, is_folder, is_private_regular, is_regular, read_regular
from .schema import schema_errors
from .validated import passed_before, remember_passed

_HASH_LEN = 64
#: artifacts and failure records are world-readable: a web server or a shared CI cache reads them
FILE_MODE = 0o644
LEDGER = ".ledger"
_LEDGER_MAX = 256 * 1024
_MIB = 1024 * 1024
#: the most bytes read from one store file with no tensorviz_max_result_mb (a command, not a build)
DEFAULT_READ_LIMIT = 256 * _MIB
#: (store root, kind, content hash) -> document kept in memory because the store could not be written
_HELD: dict[tuple[str, str, str], dict[str, Any]] = {}


def dump_json(value: Any) -> str:
    """The on-disk form: stable key order as given, two-space indent, trailing newline."""
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@dataclass(frozen=True)
class StoreProblem:
    """Why a stored file could not be used (it is then a cache miss)."""

    path: Path
    reason: str


class ArtifactStore:
    """A directory of artifacts and failure records, addressed by content hash.

    ``trusted`` maps hashes to the (mtime_ns, size) of a file that already passed
    validation; an unchanged file is not validated again. Sphinx keeps it in the
    environment, so warm builds skip the schema check.
    """

    def __init__(self, root: Path, trusted: dict[str, list[int]] | None = None, max_mb: float | None = None,
                 read: dict[str, tuple[list[int], dict[str, Any], str]] | None = None) -> None:
        self.root = Path(root)
        self.trusted = trusted if trusted is not None else {}
        self.max_mb = max_mb  # larger artifact files are refused unread (tensorviz_max_result_mb)
        #: hash -> ((mtime_ns, size), artifact, sha256 of the file) of files read and checked in this
        #: process: an unchanged file is not read again (the build reads each artifact in several phases)
        self.read = read if read is not None else {}

    @classmethod
    def for_settings(cls, conf: Any, trusted: dict[str, list[int]] | None = None,
                     read: dict[str, tuple[list[int], dict[str, Any], str]] | None = None) -> ArtifactStore:
        """The store of a :class:`~sphinx_tensorviz.config.Settings`, refusing files over its size limit:
        this folder, or a remote store (``tensorviz_artifact_store`` is a URL) cached in ``store_dir``."""
        if getattr(conf, "store_url", ""):
            from .remote import RemoteStore

            return RemoteStore(conf.store_url, conf.store_dir, trusted, max_mb=conf.max_result_mb,
                               require_signature=getattr(conf, "require_signature", False), read=read)
        return cls(conf.store_dir, trusted, max_mb=conf.max_result_mb, read=read)

    # -- paths -------------------------------------------------------------
    def artifact_path(self, content_hash: str) -> Path:
        _check_hash(content_hash)
        return self.root / f"{content_hash}.json"

    def failure_path(self, content_hash: str) -> Path:
        _check_hash(content_hash)
        return self.root / "failures" / f"{content_hash}.json"

    @property
    def location(self) -> str:
        """Where the store is, as shown to users (a folder here, a URL for a remote store)."""
        return str(self.root)

    def shown(self, kind: str, content_hash: str) -> Path:
        """Where the artifact (``kind="artifact"``) or failure record is, for messages."""
        return self.artifact_path(content_hash) if kind == "artifact" else self.failure_path(content_hash)

    @property
    def read_limit(self) -> int:
        """The most bytes read from one file of this store (``max_mb``, else :data:`DEFAULT_READ_LIMIT`)."""
        return int(self.max_mb * _MIB) if self.max_mb is not None else DEFAULT_READ_LIMIT

    def size_of(self, kind: str, content_hash: str) -> int | None:
        """Bytes of the stored artifact (``kind="artifact"``) or failure record, ``None`` if absent."""
        path = self.shown(kind, content_hash)
        return path.lstat().st_size if is_regular(path) else None

    def prefetch(self, hashes: Any) -> None:
        """Make the next reads of ``hashes`` cheap; a local folder needs nothing (see RemoteStore)."""

    @property
    def uploads(self) -> bool:
        """Whether what the store lacks is uploaded from this machine's copy (a writable remote store)."""
        return False

    def upload_missing(self, hashes: Iterable[str]) -> list[str]:
        """Upload what the shared store lacks of ``hashes``; a folder is the store itself (see RemoteStore)."""
        return []

    def listing(self) -> dict[str, int | None]:
        """``{hash: size}`` of the stored artifacts, in one listing (``None``: size not known)."""
        return dict.fromkeys(self.artifact_hashes())

    def lacks(self, content_hash: str, listing: dict[str, int | None]) -> str | None:
        """Why the store (``listing``) lacks this machine's copy of a read artifact; a folder never does."""
        return None

    def has_artifact(self, content_hash: str) -> bool:
        return is_regular(self.artifact_path(content_hash)) or self._held("artifact", content_hash) is not None

    # -- held in memory (the store could not be written) --------------------
    def hold(self, kind: str, content_hash: str, document: dict[str, Any]) -> None:
        """Keep an artifact (``kind="artifact"``) or failure record in memory for the rest of this process."""
        _HELD[(str(self.root), kind, content_hash)] = document

    def _held(self, kind: str, content_hash: str) -> dict[str, Any] | None:
        return _HELD.get((str(self.root), kind, content_hash))

    def changed_since_validated(self, content_hash: str) -> bool:
        """True when a validated artifact's file was replaced since (re-executed, pulled, edited)."""
        known = self.trusted.get(content_hash)
        return known is not None and self._signature(content_hash) != known

    def _signature(self, content_hash: str) -> list[int] | None:
        """(mtime_ns, size) of the artifact's file, as the read and trust caches record it; ``None``
        when it cannot be looked at or is not a regular file (see :mod:`.files`)."""
        path = self.artifact_path(content_hash)
        try:
            stat = path.lstat()
        except OSError:
            return None
        return [stat.st_mtime_ns, stat.st_size] if is_regular(path) else None

    def artifact_hashes(self) -> list[str]:
        """Hashes of every ``*.json`` file that looks like an artifact, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(
            p.stem for p in self.root.glob("*.json") if len(p.stem) == _HASH_LEN and _is_hex(p.stem)
        )

    def failure_hashes(self) -> list[str]:
        """Hashes that have a failure record, sorted."""
        folder = self.root / "failures"
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.json") if len(p.stem) == _HASH_LEN and _is_hex(p.stem))

    # -- reading -----------------------------------------------------------
    def read_artifact(self, content_hash: str) -> dict[str, Any] | StoreProblem | None:
        """The validated artifact, a :class:`StoreProblem`, or ``None`` when absent.

        The same artifact may be returned to every reader of an unchanged file: treat it as read-only.
        """
        path = self.artifact_path(content_hash)
        try:
            stat = path.lstat()
            signature = [stat.st_mtime_ns, stat.st_size]
            known = self.read.get(content_hash)
            if known is not None and known[0] == signature and is_regular(path):
                return known[1]
            if self.max_mb is not None and stat.st_size > self.max_mb * _MIB:
                return StoreProblem(path, f"is {stat.st_size:,} bytes, over tensorviz_max_result_mb = "
                                          f"{self.max_mb:g}; it was not read")
            data = read_regular(path, self.read_limit)
        except FileNotFoundError:
            return self._held("artifact", content_hash)
        except Refused as exc:
            return StoreProblem(path, exc.reason)
        except OSError as exc:
            return StoreProblem(path, f"cannot be read ({exc})")
        try:
            artifact = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return StoreProblem(path, f"is not valid JSON ({exc})")
        except RecursionError:  # valid JSON can nest deeper than the parser recurses
            return StoreProblem(path, "is not valid JSON (nested too deep to read)")
        if self.trusted.get(content_hash) != signature and not passed_before(data):
            errors = schema_errors(artifact)
            if errors:
                return StoreProblem(path, "does not match the artifact schema: " + "; ".join(errors[:3]))
            remember_passed(data)
        if not isinstance(artifact, dict) or artifact.get("contentHash") != content_hash:
            return StoreProblem(
                path, f"holds contentHash {str(artifact.get('contentHash'))[:12]}, not the {content_hash[:12]} of its name"
            )
        try:
            recomputed = digest(artifact["request"])
        except (KeyError, TypeError, ValueError):
            recomputed = None
        if recomputed != content_hash:
            return StoreProblem(path, f"has a request that does not hash to its name {content_hash[:12]} "
                                      "(edited by hand, or written by another version)")
        self.trusted[content_hash] = signature
        self.read[content_hash] = (signature, artifact, hashlib.sha256(data).hexdigest())
        return artifact

    def stored_sha256(self, content_hash: str, artifact: dict[str, Any]) -> str:
        """The sha256 of :meth:`artifact_text`: known from the read that checked the file while it is
        unchanged (a kept figure checks every artifact it shows this way, on every use)."""
        known = self.read.get(content_hash)
        if known is not None and known[1] is artifact and self._signature(content_hash) == known[0]:
            return known[2]
        return hashlib.sha256(self.artifact_text(content_hash, artifact)).hexdigest()

    def artifact_text(self, content_hash: str, artifact: dict[str, Any]) -> bytes:
        """The stored form of ``artifact`` (read with :meth:`read_artifact`): its file's bytes when it
        has one, as they are (no second serialisation of a large artifact), else its JSON."""
        try:
            return read_regular(self.artifact_path(content_hash), self.read_limit)
        except OSError:
            return dump_json(artifact).encode("utf-8")

    def read_failure(self, content_hash: str) -> dict[str, Any] | None:
        """The recorded failure for this hash, or ``None`` (a corrupt or refused record counts as none)."""
        found = self.check_failure(content_hash)
        return found if isinstance(found, dict) else None

    def check_failure(self, content_hash: str) -> dict[str, Any] | StoreProblem | None:
        """Like :meth:`read_failure`, but a record that was refused unread (not a regular file, too
        large) is a :class:`StoreProblem`, for a located warning."""
        path = self.failure_path(content_hash)
        try:
            record = json.loads(read_regular(path, self.read_limit))
        except FileNotFoundError:
            record = self._held("failure", content_hash)
        except Refused as exc:
            return StoreProblem(path, exc.reason)
        except (OSError, ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
            return None
        return usable_failure(content_hash, record)

    # -- writing -----------------------------------------------------------
    def write_artifact(self, artifact: dict[str, Any]) -> Path:
        """Validate and atomically write ``artifact``; clears any failure record for it."""
        errors = schema_errors(artifact)
        if errors:
            raise ValueError("refusing to store an invalid artifact: " + "; ".join(errors[:3]))
        content_hash = artifact["contentHash"]
        path = self.artifact_path(content_hash)
        with self._lock():
            self._write(path, dump_json(artifact))
            self.failure_path(content_hash).unlink(missing_ok=True)
        return path

    def write_failure(self, content_hash: str, record: dict[str, Any]) -> None:
        path = self.failure_path(content_hash)
        with self._lock():
            self._write(path, dump_json({"contentHash": content_hash, **record}))

    def _write(self, path: Path, text: str) -> None:
        """Write atomically and note it in the ledger (call with the lock held)."""
        _atomic_write(path, text)
        self.note_written(path, text)

    def note_written(self, path: Path, text: str | bytes) -> None:
        """Note in the ledger that a build wrote ``path`` with ``text`` (call with the lock held)."""
        ledger, data = self.root / "failures" / LEDGER, text.encode("utf-8") if isinstance(text, str) else text
        line = f"{path.relative_to(self.root).as_posix()}\t{hashlib.sha256(data).hexdigest()}\n"
        if os.path.lexists(ledger) and not is_private_regular(ledger):
            ledger.unlink()  # not ours (a link, a hard link, a FIFO): never append through it; start a new one
        elif is_regular(ledger) and ledger.lstat().st_size > _LEDGER_MAX:  # keep it small: drop the older half
            try:
                kept = read_regular(ledger, 4 * _LEDGER_MAX).decode("utf-8", "replace").splitlines(keepends=True)
            except Refused:
                kept = []
            _atomic_write(ledger, "".join(kept[len(kept) // 2:]))
        fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     FILE_MODE)  # O_NONBLOCK: a FIFO put there meanwhile fails at once, never blocks
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(line)

    def ledger_mark(self) -> tuple[int, int]:
        """Where the ledger ends now: (inode, size), ``(0, 0)`` when there is no regular ledger (the one
        written next is then read whole); see :meth:`written_since`."""
        try:
            stat = (self.root / "failures" / LEDGER).lstat()
        except OSError:
            return (0, 0)
        return (stat.st_ino, stat.st_size) if S_ISREG(stat.st_mode) else (0, 0)

    def written_since(self, mark: tuple[int, int]) -> set[tuple[str, str]]:
        """(relative path, sha256) of every write noted in the ledger after ``mark``.

        A ledger that was replaced meanwhile (shortened, so a new inode) is read whole.
        """
        inode, offset = mark
        ledger = self.root / "failures" / LEDGER
        try:
            stat = ledger.lstat()
            start = offset if stat.st_ino == inode and offset <= stat.st_size else 0
            lines = read_regular(ledger, 4 * _LEDGER_MAX)[start:].decode("utf-8", "replace").splitlines()
        except OSError:  # absent, or not a regular file: no write is vouched for
            return set()
        return {tuple(line.split("\t", 1)) for line in lines if "\t" in line}  # type: ignore[misc]

    def delete_artifact(self, content_hash: str) -> None:
        with self._lock():
            self.artifact_path(content_hash).unlink(missing_ok=True)

    def delete_failure(self, content_hash: str) -> None:
        with self._lock():
            self.failure_path(content_hash).unlink(missing_ok=True)

    def lock(self) -> Any:
        """The store lock, for callers that must see the store without writes in progress."""
        return self._lock()

    def _lock(self) -> Any:
        """A lock in the git-ignored ``failures/`` folder, so it never shows up as a change."""
        local = self.root / "failures"
        if local.is_symlink():  # a cloned course's link to another folder: never write through it
            raise Refused(local, "is a symbolic link, not a folder; the store does not write through it")
        local.mkdir(parents=True, exist_ok=True)
        lock = local / ".lock"
        if os.path.lexists(lock) and not is_private_regular(lock):
            lock.unlink()  # not ours (a link, a hard link, a FIFO): a new, empty lock file takes its place
        if not (ignore := local / ".gitignore").exists():
            text = "# local records of failed executions and the store lock; not committed\n*\n"
            _atomic_write(ignore, text)
            self.note_written(ignore, text)
        from filelock import FileLock  # only a build that writes needs it

        return FileLock(str(lock), mode=FILE_MODE)


def usable_failure(content_hash: str, record: Any) -> dict[str, Any] | None:
    """``record`` with its text fields filled in, or ``None`` if it is not a failure record of this hash."""
    if not isinstance(record, dict) or record.get("contentHash") != content_hash:
        return None
    text_fields = ("subtype", "message", "traceback", "stdout")
    if not all(isinstance(record.get(k, ""), str) for k in text_fields):
        return None
    return {**{k: "" for k in text_fields}, **record}


def _check_hash(content_hash: str) -> None:
    # A hash becomes a file name: refuse anything that could leave the store.
    if len(content_hash) != _HASH_LEN or not _is_hex(content_hash):
        raise ValueError(f"not a sha256 hex digest: {content_hash!r}")


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers see the old file or the new one, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8")
    try:  # the old file is compared as bytes, never decoded: a corrupt one is simply replaced
        if read_regular(path, len(data)) == data:
            return
    except OSError:  # absent, not a regular file (replaced below), too large or unreadable: write
        pass
    if is_folder(path):  # refused unread like any entry that is not a file; a rename cannot replace it
        shutil.rmtree(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, FILE_MODE)  # mkstemp makes it 0600
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

