"""``tensorviz show HASH``: what one artifact (or failure record) holds and where it came from."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from ..core.kinds import kind_named
from ..store.artifacts import ArtifactStore, StoreProblem
from .project import CliError, add_project_arguments, open_project
from .table import printable, table

MIN_PREFIX = 6


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "show", help="print an artifact's summary and provenance",
        description="Print what an artifact holds (lesson, directive, kind and shape of its data, time) and its "
                    "provenance (environment, files, stdout, checks). HASH may be a prefix of at least "
                    f"{MIN_PREFIX} hex digits, as printed by 'tensorviz status'. Failure records are shown too.",
    )
    parser.add_argument("hash", metavar="HASH", help="a content hash, or an unambiguous prefix of it")
    add_project_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the stored JSON document itself")
    parser.set_defaults(run=run)


def find(store: ArtifactStore, prefix: str) -> tuple[str, Path, bool]:
    """(hash, path, is_failure) for ``prefix``; raises :class:`CliError` if none or several match."""
    prefix = prefix.strip().lower()
    if not re.fullmatch(rf"[0-9a-f]{{{MIN_PREFIX},64}}", prefix):
        raise CliError(f"{prefix!r} is not a hash prefix: give at least {MIN_PREFIX} hex digits")
    matches = [(h, store.shown("artifact", h), False) for h in store.artifact_hashes() if h.startswith(prefix)]
    if not matches:
        matches = [(h, store.shown("failure", h), True) for h in store.failure_hashes() if h.startswith(prefix)]
    if not matches:
        raise CliError(f"no artifact or failure record in {store.location} starts with {prefix}")
    if len(matches) > 1:
        raise CliError(f"{prefix} is ambiguous: " + ", ".join(h[:16] for h, _, _ in matches))
    return matches[0]


def run(args: argparse.Namespace) -> int:
    with open_project(args) as project:
        content_hash, path, is_failure = find(project.store, args.hash)
        if is_failure:
            record: Any = project.store.read_failure(content_hash)
            if record is None:
                raise CliError(f"{path.name} is not a readable failure record", 1)
        else:
            record = project.store.read_artifact(content_hash)
            if isinstance(record, StoreProblem):
                raise CliError(f"{path.name} {record.reason}", 1)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
        return 0
    print(describe_failure(content_hash, path, record) if is_failure else describe(record, path))
    return 0


def data_summary(data: dict[str, Any]) -> str:
    """What the data holds, as its kind summarises it (its kind's name when the kind says nothing)."""
    kind = kind_named(data.get("kind"))
    return kind.entry("summary")(data) if kind is not None and kind.summary else str(data.get("kind", "?"))


def describe(artifact: dict[str, Any], path: Path) -> str:
    request, env = artifact["request"], artifact["environment"]
    code = request["entry"] + (f", function {request['function']}" if request.get("function") else "")
    versions = ", ".join(f"{k} {env[k]}" for k in dict.fromkeys((env.get("framework"), "numpy", "matplotlib"))
                         if k and k in env)
    rows = [
        ["artifact", artifact["contentHash"]],
        ["file", str(path)],
        ["lesson", artifact["lessonId"]],
        ["directive", f"{request['directive']} ({request['backend']})"],
        ["code", code],
        ["seed", str(request["seed"])],
        ["inputs", json.dumps(request.get("inputs"), sort_keys=True)],
        ["options", json.dumps(request.get("options", {}), sort_keys=True)],
        ["data", data_summary(artifact["data"])],
        ["generated at", artifact["generatedAt"]],
        *([["execution", _execution(artifact["execution"])]] if isinstance(artifact.get("execution"), dict) else []),
        ["provenance", artifact["provenance"]],
        ["environment", f"{env['backend']} x{env.get('deviceCount', 1)} ({env.get('device', '?')}), "
                        f"Python {env['python']}, {versions}"],
    ]
    for file, sha in request["files"].items():
        rows.append(["file hash", f"{file}  {sha[:16]}"])
    lines = [table(["", ""], rows).split("\n", 1)[1]]
    checks = artifact.get("checks") or []
    lines.append(f"checks: {sum(c['passed'] for c in checks)}/{len(checks)} passed" if checks else "checks: none")
    for check in checks:
        detail = f" ({check['detail']})" if check.get("detail") else ""
        lines.append(printable(f"  [{'pass' if check['passed'] else 'FAIL'}] {check['name']}: {check['description']}"
                               f"{detail}"))
    stdout = artifact.get("stdout", "")
    lines.append("stdout:" + (" (empty)" if not stdout.strip() else ""))
    lines.extend(f"  | {printable(line)}" for line in stdout.rstrip("\n").splitlines())
    return "\n".join(lines)


def describe_failure(content_hash: str, path: Path, record: dict[str, Any]) -> str:
    lines = [
        f"failure record {content_hash}",
        f"file           {path}",
        f"recorded at    {record.get('recordedAt', '?')}",
        f"kind           {record.get('subtype', 'execution')}",
    ]
    lines = [printable(line) for line in lines]
    first, *rest = str(record.get("message", "")).splitlines() or [""]
    lines += [printable(f"message        {first}"), *(f"               {printable(line)}" for line in rest)]
    if record.get("traceback"):
        lines.append("traceback:")
        lines.extend(f"  | {printable(line)}" for line in record["traceback"].rstrip("\n").splitlines())
    if record.get("stdout"):
        lines.append("stdout:")
        lines.extend(f"  | {printable(line)}" for line in record["stdout"].rstrip("\n").splitlines())
    return "\n".join(lines)


def _execution(facts: dict[str, Any]) -> str:
    """``1.23 s, peak 230 MiB``: the facts of the run that recorded the artifact."""
    parts = [f"{facts['seconds']:.2f} s"] if isinstance(facts.get("seconds"), (int, float)) else []
    if isinstance(facts.get("peakMemoryMb"), (int, float)):
        parts.append(f"peak {facts['peakMemoryMb']:.0f} MiB")
    return ", ".join(parts) or "-"
