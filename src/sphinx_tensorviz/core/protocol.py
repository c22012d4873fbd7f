"""The worker protocol: the job the build sends a worker, and the result that comes back.

Both cross a process boundary as JSON files (``job.json``, ``result.json``), and the
worker runs untrusted lesson code, so what it writes is parsed here into typed values and
refused when it has any other shape (:func:`parse_result`). A result is either a
:class:`Success` (artifact ``data`` and what came with it) or a :class:`Failure` of one
:class:`~.failures.FailureKind` (listed once, in :mod:`.failures`; the warning subtypes reuse them).

Which code a worker runs for a job is the job's ``runner`` (``module:function``), copied from the
figure kind's declaration (:class:`~.kinds.FigureKind`) into the request when the directive was read:
the execution machinery never imports a figure kind, and no table here names one.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from .failures import FailureKind

#: a worker entry as a kind declares it: ``package.module:function``
RUNNER = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


class ProtocolError(ValueError):
    """A job or result document that does not have the shape of the protocol."""


#: the kinds a worker reports about its own job; a timeout or a crash is the build's finding
WORKER_KINDS = frozenset({FailureKind.execution, FailureKind.bad_result, FailureKind.limit})


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to run one directive's code, and nothing of the build.

    Paths are absolute on the machine that runs the job; a portable job (:mod:`..execute.portable`)
    carries its files' text in ``sources`` and paths relative to its own folder instead.
    """

    directive: str
    runner: str  #: ``module:function``: the worker entry of the job's figure kind
    backend: str
    seed: int
    function: str | None
    inputs: Any
    options: dict[str, Any]
    device: str
    entry: str  #: the source file relative to the course, or ``<inline>``
    srcdir: str
    files: dict[str, str]  #: relative path -> sha256 of every file the content hash covers
    search_path: tuple[str, ...] = ()
    entry_path: str | None = None
    inline_code: str | None = None
    inline_name: str | None = None  #: ``page.md:LINE`` of inline code, for tracebacks
    sweep_points: tuple[dict[str, Any], ...] | None = None  #: a cross-sweep check's stored points
    memory_limit_mb: int = 0
    limits: dict[str, float] = field(default_factory=dict)  #: :meth:`~.limits.Limits.to_job`
    sources: dict[str, str] | None = None  #: a portable job's files: relative path -> text

    #: field -> key in ``job.json`` (the wire names predate the dataclass)
    WIRE: ClassVar[dict[str, str]] = {
        "search_path": "searchPath", "entry_path": "entryPath", "inline_code": "inlineCode",
        "inline_name": "inlineName", "sweep_points": "sweepPoints", "memory_limit_mb": "memoryLimitMb",
    }

    @property
    def shown(self) -> str:
        """The job's lesson file (or page and line, for inline code), as messages name it."""
        return str(self.inline_name or self.entry_path or self.entry)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is None and spec.default is None:
                continue
            document[self.WIRE.get(spec.name, spec.name)] = list(value) if isinstance(value, tuple) else value
        return document

    @classmethod
    def from_json(cls, document: Any) -> Job:
        if not isinstance(document, dict):
            raise ProtocolError("a job is a JSON object")
        wire = {cls.WIRE.get(spec.name, spec.name): spec for spec in fields(cls)}
        unknown = sorted(set(document) - set(wire))
        if unknown:
            raise ProtocolError(f"unknown job fields: {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for key, spec in wire.items():
            if key in document:
                value = document[key]
                if spec.name in _TUPLES and value is not None:
                    if not isinstance(value, list):
                        raise ProtocolError(f"the job's {key} must be a list")
                    value = tuple(value)
                values[spec.name] = value
        missing = [spec.name for spec in fields(cls) if spec.name not in values and _required(spec)]
        if missing:
            raise ProtocolError(f"the job lacks {', '.join(missing)}")
        job = cls(**values)
        _check_types(job)
        return job


_TUPLES = ("search_path", "sweep_points")


def _required(spec: Any) -> bool:
    return spec.default is MISSING and spec.default_factory is MISSING


def _check_types(job: Job) -> None:
    text = ("directive", "runner", "backend", "device", "entry", "srcdir")
    if not all(isinstance(getattr(job, name), str) for name in text):
        raise ProtocolError(f"job fields {', '.join(text)} must be text")
    if not RUNNER.fullmatch(job.runner):
        raise ProtocolError(f"the job's runner {job.runner!r} is not module:function")
    if not isinstance(job.seed, int) or isinstance(job.seed, bool):
        raise ProtocolError("the job's seed must be an integer")
    if not isinstance(job.options, dict) or not isinstance(job.files, dict) or not isinstance(job.limits, dict):
        raise ProtocolError("the job's options, files and limits must be objects")
    if not all(isinstance(p, str) for p in job.search_path):
        raise ProtocolError("the job's search path must be text")


#: a file a worker returns: ``<sha256 of its bytes>.<extension>``, nothing else (no folder, no dot file)
RETURNED_FILE = re.compile(r"[0-9a-f]{64}\.[a-z0-9]{1,16}")
#: the most files one result may return, and the most bytes they may hold together whatever the
#: kind's own limit (a kind bounds its files by a size limit on the data that describes them)
MAX_RETURNED_FILES, MAX_RETURNED_BYTES = 64, 1 << 30


@dataclass(frozen=True)
class ReturnedFile:
    """A file the worker wrote beside its result (``files/<name>``), e.g. a model's weights.

    Any kind may return files (its entry returns ``{"files": {name: bytes}}``). Named by their
    sha256, so the build can check what it moves into the store, and described in the kind's
    ``data`` by an object ``{"sha256", "size"}``, so the kind's size limit, which reads ``data``,
    bounds them (:func:`described_files`).
    """

    name: str
    size: int

    @property
    def sha256(self) -> str:
        return self.name.partition(".")[0]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size}


@dataclass(frozen=True)
class Success:
    """A computation that produced artifact ``data`` (plus checks, printed output and facts)."""

    data: dict[str, Any]
    environment: dict[str, Any]  #: backend, Python and framework versions, devices
    stdout: str = ""
    checks: tuple[dict[str, Any], ...] | None = None  #: ``None``: the directive ran no checks
    notes: tuple[str, ...] = ()  #: what the worker had to cut, e.g. printed output over its limit
    execution: dict[str, float] = field(default_factory=dict)  #: facts of this run (peak memory)
    stderr: str = ""  #: the end of what the worker process wrote outside the lesson's stdout
    files: tuple[ReturnedFile, ...] = ()  #: files written beside the result (moved into the store)

    ok: ClassVar[bool] = True

    def to_json(self) -> dict[str, Any]:
        return {"ok": True, "data": self.data, "environment": self.environment, "stdout": self.stdout,
                **({"checks": list(self.checks)} if self.checks is not None else {}),
                "notes": list(self.notes), "execution": self.execution,
                **({"stderr": self.stderr} if self.stderr else {}),
                **({"files": [f.to_json() for f in self.files]} if self.files else {})}


@dataclass(frozen=True)
class Failure:
    """A computation that produced no artifact, and why."""

    kind: FailureKind
    message: str
    traceback: str = ""
    stdout: str = ""
    notes: tuple[str, ...] = ()
    limit: str | None = None  #: the :class:`~.limits.Limits` field a result exceeded
    limits: dict[str, float] | None = None  #: {that field: its value} when refused, so raising it runs again
    timeout: float | None = None  #: ``tensorviz_timeout`` of a run that timed out
    execution: dict[str, float] = field(default_factory=dict)
    stderr: str = ""

    ok: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"ok": False, "subtype": self.kind.value, "message": self.message,
                                    "traceback": self.traceback, "stdout": self.stdout, "notes": list(self.notes),
                                    "execution": self.execution}
        for name in ("limit", "limits", "timeout"):
            if getattr(self, name) is not None:
                document[name] = getattr(self, name)
        if self.stderr:
            document["stderr"] = self.stderr
        return document


Result = Success | Failure


def parse_result(document: Any) -> Result:
    """The result a worker wrote, accepted only in the protocol's shape (it ran untrusted code).

    A worker reports successes and the failures of :data:`WORKER_KINDS`; anything else raises
    :class:`ProtocolError` (the build then records a crash).
    """
    if not isinstance(document, dict) or not isinstance(document.get("ok"), bool):
        raise ProtocolError("not a result document")
    execution = document.get("execution", {})
    if not isinstance(execution, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in execution.values()):
        raise ProtocolError("execution facts are not numbers")
    notes = document.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ProtocolError("notes are not a list of text")
    stdout, stderr = document.get("stdout", ""), document.get("stderr", "")
    if not isinstance(stdout, str) or not isinstance(stderr, str):
        raise ProtocolError("stdout or stderr is not text")
    if document["ok"]:
        data, environment, checks = document.get("data"), document.get("environment"), document.get("checks")
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            raise ProtocolError("no data of a known kind")
        if not isinstance(environment, dict) or not all(isinstance(environment.get(k), str)
                                                        for k in ("backend", "python", "framework")):
            raise ProtocolError("no environment")
        if checks is not None and (not isinstance(checks, list) or not all(isinstance(c, dict) for c in checks)):
            raise ProtocolError("checks are not a list of records")
        return Success(data, environment, stdout, None if checks is None else tuple(checks), tuple(notes), execution,
                       stderr, _returned_files(document.get("files", []), data))
    try:
        kind = FailureKind(document.get("subtype"))
    except ValueError:
        raise ProtocolError("not a failure the worker reports") from None
    if kind not in WORKER_KINDS or not isinstance(document.get("message"), str):
        raise ProtocolError("not a failure the worker reports")
    if not isinstance(document.get("traceback", ""), str):
        raise ProtocolError("traceback is not text")
    limit = document.get("limit")
    return Failure(kind, document["message"], document.get("traceback", ""), stdout, tuple(notes),
                   limit=limit if isinstance(limit, str) else None, execution=execution, stderr=stderr)


def _returned_files(listed: Any, data: dict[str, Any]) -> tuple[ReturnedFile, ...]:
    """The files a result lists: each named by its sha256, of a whole size, and described in ``data``."""
    if not isinstance(listed, list) or len(listed) > MAX_RETURNED_FILES:
        raise ProtocolError(f"files are not a list of at most {MAX_RETURNED_FILES}")
    described = described_files(data)
    files = []
    for entry in listed:
        if not isinstance(entry, dict) or set(entry) != {"name", "size"}:
            raise ProtocolError("a returned file is not {name, size}")
        name, size = entry["name"], entry["size"]
        if not isinstance(name, str) or not RETURNED_FILE.fullmatch(name):
            raise ProtocolError("a returned file is not named <sha256>.<extension>")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ProtocolError("a returned file's size is not a whole number")
        if (name.partition(".")[0], size) not in described:
            raise ProtocolError(f"the returned file {name} is not described in the data as {{sha256, size}}")
        files.append(ReturnedFile(name, size))
    if len({f.name for f in files}) != len(files):
        raise ProtocolError("a file is returned twice")
    if sum(f.size for f in files) > MAX_RETURNED_BYTES:
        raise ProtocolError(f"the returned files hold more than {MAX_RETURNED_BYTES:,} bytes")
    return tuple(files)


def described_files(data: Any) -> set[tuple[str, int]]:
    """Every ``(sha256, size)`` that ``data`` describes as an object with those two keys, at any depth."""
    found: set[tuple[str, int]] = set()
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            sha, size = value.get("sha256"), value.get("size")
            if isinstance(sha, str) and isinstance(size, int) and not isinstance(size, bool):
                found.add((sha, size))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found
