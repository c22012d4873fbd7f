"""Copy artifacts between two stores (``tensorviz push`` and ``tensorviz pull``).

Every artifact is read through the source store, so it is validated exactly as a
build would (schema, name = ``contentHash`` = hash of its request) before it is
written to the target; a file that fails is reported and not copied. Artifacts the
target already has are skipped: a name is the hash of the request, so any valid
artifact of that name is as good as another. Failure records are copied only when
asked (they describe one environment's failure, see ``tensorviz_execution_mode``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .artifacts import ArtifactStore, StoreProblem

#: artifacts copied at the same time
WRITERS = 8


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
    listed = source.artifact_hashes()
    wanted = [h for h in listed if h not in present]
    report.skipped = [h for h in listed if h in present]
    source.prefetch(wanted)

    def copy_one(content_hash: str) -> tuple[str, str | None]:
        found = source.read_artifact(content_hash)
        if isinstance(found, StoreProblem):
            return content_hash, f"{found.path.name} {found.reason}"
        if found is not None:
            try:  # validated again: this process may not know a kind the source's reader trusted
                target.write_artifact(found)
            except ValueError as exc:
                return content_hash, f"{content_hash}.json is refused by the target: {exc}"
        return content_hash, None

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:  # remote writes wait on the network, not the CPU
        for content_hash, problem in pool.map(copy_one, wanted):
            if problem is None:
                report.copied.append(content_hash)
            else:
                report.refused.append((content_hash, problem))
    if failures:
        have = set(target.failure_hashes())
        for content_hash in source.failure_hashes():
            record = source.read_failure(content_hash)
            if record is not None and content_hash not in have and not target.has_artifact(content_hash):
                target.write_failure(content_hash, {k: v for k, v in record.items() if k != "contentHash"})
                report.failures += 1
    return report
