"""Copy artifacts between two stores (``tensorviz push`` and ``tensorviz pull``).

Every artifact is read through the source store, so it is validated exactly as a
build would (schema, name = ``contentHash`` = hash of its request) before it is
written to the target; a file that fails is reported and not copied. Artifacts the
target already has are skipped: a name is the hash of the request, so any valid
artifact of that name is as good as another. Failure records are copied only when
asked (they describe one environment's failure, see ``tensorviz_execution_mode``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .artifacts import ArtifactStore, StoreProblem


@dataclass
class CopyReport:
    """What a copy did: hashes copied and skipped, and (hash, reason) of files refused."""

    copied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    failures: int = 0


def copy_store(source: ArtifactStore, target: ArtifactStore, failures: bool = False) -> CopyReport:
    """Copy every valid artifact (and, if asked, failure record) that ``target`` lacks."""
    report = CopyReport()
    present = set(target.artifact_hashes())
    for content_hash in source.artifact_hashes():
        if content_hash in present:
            report.skipped.append(content_hash)
            continue
        found = source.read_artifact(content_hash)
        if isinstance(found, StoreProblem):
            report.refused.append((content_hash, f"{found.path.name} {found.reason}"))
        elif found is not None:
            target.write_artifact(found)
            report.copied.append(content_hash)
    if failures:
        have = set(target.failure_hashes())
        for content_hash in source.failure_hashes():
            record = source.read_failure(content_hash)
            if record is not None and content_hash not in have and not target.has_artifact(content_hash):
                target.write_failure(content_hash, {k: v for k, v in record.items() if k != "contentHash"})
                report.failures += 1
    return report
