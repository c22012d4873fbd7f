"""The execution report: how long each figure's execution took and how much memory it used.

Read from the ``execution`` facts that every executed artifact records (wall time as the
build saw it, peak resident memory of the job's process), slowest first. Shared by
``tensorviz status --times`` and the build's ``_tensorviz/execution-times.html`` page, as
sphinx-gallery's ``sg_execution_times`` shows a gallery's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.request import ExecutionRequest
from .artifacts import ArtifactStore


@dataclass(frozen=True)
class Timing:
    """One executed computation (the first directive that uses it) and its recorded facts."""

    docname: str
    lineno: int
    directive: str
    backend: str
    content_hash: str
    seconds: float
    peak_memory_mb: float | None
    generated_at: str


def timings(requests: Iterable[ExecutionRequest], store: ArtifactStore) -> list[Timing]:
    """Every distinct computation of ``requests`` whose artifact records its execution, slowest first.

    Artifacts recorded before execution facts existed (or copied in by ``tensorviz``
    commands that do not execute) have none and are left out.
    """
    found: dict[str, Timing] = {}
    for request in requests:
        if request.content_hash in found:
            continue
        artifact = store.read_artifact(request.content_hash)
        facts = artifact.get("execution") if isinstance(artifact, dict) else None
        if not isinstance(facts, dict) or not isinstance(facts.get("seconds"), (int, float)):
            continue
        peak = facts.get("peakMemoryMb")
        found[request.content_hash] = Timing(
            request.docname, request.lineno, request.directive, request.backend, request.content_hash,
            float(facts["seconds"]), float(peak) if isinstance(peak, (int, float)) else None,
            str(artifact.get("generatedAt", "")))
    return sorted(found.values(), key=lambda t: (-t.seconds, t.docname, t.lineno))


def megabytes(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
