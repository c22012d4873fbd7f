"""The two documents the store keeps for a computation: its artifact, or its failure record.

Built here only, from the request and the worker's typed result, so that what the store
writes, what ``tensorviz show`` prints and what the renderer reads agree.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from .hashing import SCHEMA_VERSION
from .protocol import Failure, Success
from .request import ExecutionRequest


def now() -> str:
    """A UTC time stamp, as artifacts and failure records carry it."""
    return datetime.now(timezone.utc).isoformat()


def build_artifact(request: ExecutionRequest, result: Success,
                   execution: dict[str, float] | None = None) -> dict[str, Any]:
    """The stored document for a successful execution.

    ``execution`` (wall time and peak memory of this run) sits beside ``generatedAt``: both
    are facts of one run, which determinism checks ignore.
    """
    environment = result.environment
    artifact: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "lessonId": request.lesson_id,
        "contentHash": request.content_hash,
        "rendererHash": request.renderer_hash,
        "kind": "executed",
        "generatedAt": now(),
        **({"execution": execution} if execution else {}),
        "provenance": f"recorded_{environment['backend']}_computation",
        "environment": environment,
        "stdout": result.stdout,
        "request": request.hashed_inputs(),
        "data": result.data,
    }
    if result.checks is not None:
        artifact["checks"] = list(result.checks)
    if result.notes:  # kept, so that a build drawing it from the store warns as the one that ran it did
        artifact["notes"] = list(result.notes)
    return artifact


def failure_record(failure: Failure, environment: str) -> dict[str, Any]:
    """What is kept of a failed computation (``environment``: the fingerprint of the workers' Python,
    so a failure recorded under another environment is retried)."""
    return {
        "subtype": failure.kind.value,
        "message": failure.message,
        "traceback": failure.traceback,
        "stdout": failure.stdout,
        "timeout": failure.timeout,
        "environment": environment,
        **({"limits": failure.limits} if failure.limits is not None else {}),  # a limit failure: under which limits
        "recordedAt": now(),
    }
