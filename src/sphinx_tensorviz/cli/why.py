"""Why a directive would execute again: compare its request with the artifacts it may replace.

An artifact stores the request that produced it (``artifact["request"]``), but not the
document or line. The *predecessor* of a request without an artifact is therefore
searched among the stored artifacts that no directive uses any more, preferring the same
lesson, directive, source file and function, then the fewest differences.
"""

from __future__ import annotations

from typing import Any

from ..core.hashing import SCHEMA_VERSION, digest
from ..core.request import INLINE, ExecutionRequest

NEVER = "never executed"


def differences(request: ExecutionRequest, artifact: dict[str, Any]) -> list[str]:
    """What changed between ``artifact`` (the old execution) and ``request`` (today's), in words."""
    old = artifact.get("request", {})
    reasons: list[str] = []
    if artifact.get("schemaVersion") != SCHEMA_VERSION:
        reasons.append(f"schema version changed ({artifact.get('schemaVersion')} -> {SCHEMA_VERSION})")
    if old.get("directive") != request.directive:
        reasons.append(f"directive changed ({old.get('directive')} -> {request.directive})")
    if old.get("backend") != request.backend:
        reasons.append(f"backend changed ({old.get('backend')} -> {request.backend})")
    if old.get("entry") != request.entry:
        reasons.append(f"source file changed ({_shown(old.get('entry'))} -> {_shown(request.entry)})")
    reasons.extend(_file_changes(old.get("files") or {}, old.get("entry"), request))
    if old.get("function") != request.function:
        reasons.append(f"function changed ({old.get('function')} -> {request.function})")
    if old.get("inputs") != request.inputs:
        reasons.append("inputs changed" + _keys(old.get("inputs"), request.inputs))
    if old.get("seed") != request.seed:
        reasons.append(f"seed changed ({old.get('seed')} -> {request.seed})")
    if (old.get("options") or {}) != request.options:
        reasons.append("options changed" + _keys(old.get("options") or {}, request.options))
    if not reasons:
        reasons.append(_hidden_change(request, artifact))
    return reasons


def _shown(entry: str | None) -> str:
    return "the inline code" if entry == INLINE else str(entry)


def _file_changes(old: dict[str, str], old_entry: str | None, request: ExecutionRequest) -> list[str]:
    new = request.files
    reasons = []
    for path in sorted(set(old) & set(new), key=lambda p: (p != request.entry, p)):
        if old[path] != new[path]:
            if path == request.entry:
                reasons.append(f"code changed: {_shown(path)}")
            else:
                reasons.append(f"an imported module changed: {path}")
    added = sorted(set(new) - set(old) - {request.entry})
    dropped = sorted(set(old) - set(new) - {old_entry})
    if added:
        reasons.append("new local import: " + ", ".join(added))
    if dropped:
        reasons.append("no longer imported: " + ", ".join(dropped))
    return reasons


def _keys(old: Any, new: Any) -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        changed = sorted(k for k in set(old) | set(new) if old.get(k, _MISSING) != new.get(k, _MISSING))
        if changed:
            return ": " + ", ".join(changed)
    return ""


_MISSING = object()


def _hidden_change(request: ExecutionRequest, artifact: dict[str, Any]) -> str:
    """Same visible request: the device or the hashed framework versions must differ."""
    old = artifact.get("request", {})
    base = {
        "schemaVersion": artifact.get("schemaVersion"), "directive": old.get("directive"),
        "backend": old.get("backend"), "entry": old.get("entry"), "files": old.get("files"),
        "function": old.get("function"), "inputs": old.get("inputs"), "seed": old.get("seed"),
        "options": old.get("options") or {},
    }
    env = artifact.get("environment", {})
    versions = {p: env.get(p, "missing") for p in sorted({"numpy", old.get("backend") or "numpy"})}
    for device in ("cpu", "gpu"):
        for recorded in (None, versions):
            candidate = {**base, "device": device, **({"versions": recorded} if recorded is not None else {})}
            if digest(candidate) != artifact.get("contentHash"):
                continue
            if device != request.device:
                return f"device changed ({device} -> {request.device}; tensorviz_device)"
            if (recorded is None) != (request.versions is None):
                now = "now" if request.versions is not None else "no longer"
                return f"framework versions are {now} hashed (tensorviz_hash_versions)"
            changed = sorted(k for k in set(recorded or {}) | set(request.versions or {})
                             if (recorded or {}).get(k) != (request.versions or {}).get(k))
            return "framework version changed: " + ", ".join(
                f"{k} {(recorded or {}).get(k)} -> {(request.versions or {}).get(k)}" for k in changed)
    return "the device or the hashed framework versions changed"


def _closeness(request: ExecutionRequest, artifact: dict[str, Any]) -> tuple[int, ...]:
    old = artifact.get("request", {})
    return (
        artifact.get("lessonId") != request.lesson_id,
        old.get("entry") != request.entry,
        old.get("function") != request.function,
        len(differences(request, artifact)),
    )


def predecessor(request: ExecutionRequest, candidates: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The unused artifact this request most likely replaces, or ``None``.

    A candidate must come from the same directive and either the same lesson or the
    same source file and function (so a renamed lesson is still recognised).
    """
    fitting = [
        a for a in candidates.values()
        if a.get("request", {}).get("directive") == request.directive
        and (a.get("lessonId") == request.lesson_id
             or (request.entry != INLINE and a.get("request", {}).get("entry") == request.entry
                 and a.get("request", {}).get("function") == request.function))
    ]
    if not fitting:
        return None
    return min(fitting, key=lambda a: (_closeness(request, a), a.get("contentHash", "")))
