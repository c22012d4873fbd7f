"""``tensorviz gc``: find artifacts (and failure records) that no directive refers to any more."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..store.artifacts import ArtifactStore
from .project import add_project_arguments, open_project, print_read_warnings
from .table import table


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "gc", help="list stored artifacts that no directive uses; delete them with --delete",
        description="Read the project and list the artifacts in the store that no directive refers to "
                    "(left behind when code, inputs or options changed). Nothing is deleted without --delete. "
                    "Fix every tensorviz warning first: a directive that fails to parse refers to nothing.",
    )
    add_project_arguments(parser)
    parser.add_argument("--delete", action="store_true", help="delete the unused artifacts and failure records")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with open_project(args) as project:
        project.read()
        print_read_warnings(project)
        if project.tensorviz_warnings() and args.delete:
            print("tensorviz gc: note: the project has tensorviz warnings; an artifact of a directive that "
                  "did not parse counts as unused", file=sys.stderr)
        used = {r.content_hash for r in project.requests}
        store = project.store
        orphans = [h for h in store.artifact_hashes() if h not in used]
        stale_failures = [h for h in store.failure_hashes() if h not in used]
        rows = []
        store.prefetch(orphans)
        for content_hash in orphans:
            rows.append([content_hash[:12], *_describe(store, content_hash)])
        for content_hash in stale_failures:
            rows.append([content_hash[:12], "(failure record)", "", "", _size(store.size_of("failure", content_hash))])
        if rows:
            print(table(["hash", "lesson", "directive", "generated", "size"], rows))
        if args.delete:
            for content_hash in orphans:
                store.delete_artifact(content_hash)
            for content_hash in stale_failures:
                store.delete_failure(content_hash)
            print(f"deleted {len(orphans)} unused artifact(s) and {len(stale_failures)} failure record(s) "
                  f"from {store.location}")
        else:
            print(f"{len(orphans)} unused artifact(s), {len(stale_failures)} unused failure record(s) in "
                  f"{store.location}" + ("; run again with --delete to remove them" if rows else ""))
    return 0


def _describe(store: ArtifactStore, content_hash: str) -> list[str]:
    size = _size(store.size_of("artifact", content_hash))
    artifact = store.read_artifact(content_hash)
    if not isinstance(artifact, dict):
        return ["(unreadable)", "", "", size]
    return [str(artifact.get("lessonId", "?")), str(artifact.get("request", {}).get("directive", "?")),
            str(artifact.get("generatedAt", "?"))[:19], size]


def _size(size: int | None) -> str:
    if size is None:
        return "?"
    return f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} B"
