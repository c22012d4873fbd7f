"""``tensorviz status``: is each directive's artifact cached, missing, failed or stale, and why?"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from ..core.hashing import canonical_json
from ..core.request import TRAINED, ExecutionRequest
from ..core.words import plural
from ..execute.fingerprint import EnvironmentCheck
from ..store.artifacts import StoreProblem
from ..store.timings import Timing, megabytes, timings
from .project import Project, add_project_arguments, open_project, print_read_warnings
from .table import table
from .why import NEVER, differences, predecessor

STATES = ("cached", "stale", "missing", "failed")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "status", help="show whether each directive's artifact is cached, and why it would run again",
        description="Read the project (nothing executes) and show, for every tensorviz directive, whether its "
                    "artifact is cached, missing (never executed), failed (a failure is recorded) or stale "
                    "(an older artifact exists and the reason it no longer matches).",
    )
    add_project_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of a table")
    parser.add_argument("--times", action="store_true",
                        help="list the executed figures, slowest first, with wall time and peak memory")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 unless every directive is cached (for CI)")
    parser.set_defaults(run=run)


def sweep_points(requests: list[ExecutionRequest]) -> dict[str, dict[str, Any]]:
    """``{content hash: {name: value}}`` for the points of each sweep: the arguments (``:inputs:`` of a
    heatmap, ``:model-args:`` of a graph) whose values differ between the requests of one directive."""
    groups: dict[tuple[str, int, str], list[ExecutionRequest]] = {}
    for request in requests:
        groups.setdefault((request.docname, request.lineno, request.directive), []).append(request)
    points: dict[str, dict[str, Any]] = {}
    for group in groups.values():
        if len(group) < 2:
            continue
        arguments = [_arguments(r) for r in group]
        swept = [name for name in dict.fromkeys(n for a in arguments for n in a)
                 if len({canonical_json(a.get(name)) for a in arguments}) > 1]
        for request, given in zip(group, arguments):
            points[request.content_hash] = {name: given.get(name) for name in swept}
    return points


def _arguments(request: ExecutionRequest) -> dict[str, Any]:
    inputs = request.inputs if isinstance(request.inputs, dict) else {}
    return {**inputs, **(request.options.get("model_args") or {})}


def one_line(why: list[str], content_hash: str) -> str:
    """The reasons on one table row: a message of several lines (a failure's) keeps its first, and
    says where the rest is; ``--json`` keeps them whole."""
    shown = []
    for reason in why:
        first, *rest = reason.strip().splitlines() or [""]
        shown.append(f"{first} [+{plural(len(rest), 'line')}: tensorviz show {content_hash[:12]}]" if rest else first)
    return "; ".join(shown)


def entries(project: Project) -> list[dict[str, Any]]:
    """One record per directive, in document order."""
    store = project.store
    used = {r.content_hash for r in project.requests}
    unused: dict[str, dict[str, Any]] = {}
    listing = store.listing()  # for a remote store, what the store itself holds (one listing)
    listed = sorted(listing)
    store.prefetch(listed)  # a remote store: fetch them together, not one round trip each
    for content_hash in listed:
        if content_hash not in used:
            found = store.read_artifact(content_hash)
            if isinstance(found, dict):
                unused[content_hash] = found
    records = []
    points = sweep_points(project.requests)
    environment = EnvironmentCheck(project.conf.python, project.conf.timeout)
    for request in project.requests:
        found = store.read_artifact(request.content_hash)
        failure = store.read_failure(request.content_hash)
        previous = None
        lacking = store.lacks(request.content_hash, listing) if isinstance(found, dict) and store.uploads else None
        if lacking:
            state, why = "missing", [f"{lacking}; the next build uploads it"]
        elif isinstance(found, dict):
            state, why = "cached", []
        elif failure is not None:
            state = "failed"
            why = [f"{failure.get('subtype', 'execution')}: {failure.get('message', '')}".strip()]
            retry = environment.retry_reason(failure)
            if retry:
                why.append(f"will be retried: {retry}")
        elif isinstance(found, StoreProblem):
            state, why = "stale", [f"stored artifact is unusable: {found.reason}"]
        else:
            previous = predecessor(request, unused)
            state, why = ("stale", differences(request, previous)) if previous else ("missing", [NEVER])
        records.append({
            "location": project.location(request),
            "docname": request.docname,
            "line": request.lineno,
            "directive": request.directive,
            "point": points.get(request.content_hash),
            "lessonId": request.lesson_id,
            "state": state,
            "contentHash": request.content_hash,
            "why": why,
            "previousHash": previous["contentHash"] if previous else None,
        })
    return records


def uses(requests: list[ExecutionRequest]) -> dict[str, dict[str, Any]]:
    """``{training name: {"figures": N, "training": content hash}}``: the figures that load a training's
    model (``:model: @name``), so an author sees what a change to the training runs again."""
    found: dict[str, dict[str, Any]] = {}
    for request in requests:
        used = request.options.get(TRAINED)
        if isinstance(used, dict) and not used.get("shared"):  # not a :frameworks: figure's own shared weights
            entry = found.setdefault(str(used["name"]), {"figures": 0, "training": used["training"]})
            entry["figures"] += 1
    return found


def uses_lines(project: Project) -> list[str]:
    """``3 figures use induction (lessons/induction.md:12)``, one line per training used."""
    where = {r.content_hash: project.location(r) for r in project.requests}
    lines = []
    for name, used in sorted(uses(project.requests).items()):
        count = used["figures"]
        place = f" ({where[used['training']]})" if used["training"] in where else ""
        lines.append(f"{plural(count, 'figure')} use{'s' if count == 1 else ''} {name}{place}")
    return lines


def summary(records: list[dict[str, Any]]) -> dict[str, int]:
    counts = Counter(r["state"] for r in records)
    return {state: counts.get(state, 0) for state in STATES}


def run(args: argparse.Namespace) -> int:
    with open_project(args) as project:
        project.read()
        print_read_warnings(project)
        records = entries(project)
        slowest = timings(project.requests, project.store) if args.times else []
    counts = summary(records)
    if args.json:
        report: dict[str, Any] = {"directives": records, "summary": counts, "uses": uses(project.requests)}
        if args.times:
            report["times"] = [_time_record(project, t) for t in slowest]
        print(json.dumps(report, indent=2))
    elif args.times:
        _print_times(project, slowest)
    else:
        if records:
            print(_table(records))
        n = len(records)
        print(f"{n} directive{'s' if n != 1 else ''}: " + ", ".join(f"{counts[s]} {s}" for s in STATES))
        for line in uses_lines(project):
            print(line)
    if args.check and counts["cached"] != len(records):
        return 1
    return 0


def _table(records: list[dict[str, Any]]) -> str:
    """One row per request; a ``point`` column (``rows=2``) only when the project has a sweep."""
    header = ["document:line", "directive", "state", "hash", "why"]
    rows = [[r["location"], r["directive"], r["state"], r["contentHash"][:12], one_line(r["why"], r["contentHash"])]
            for r in records]
    if any(r["point"] for r in records):
        header.insert(1, "point")
        for row, record in zip(rows, records):
            point = record["point"] or {}
            row.insert(1, " ".join(f"{name}={json.dumps(value)}" for name, value in point.items()))
    return table(header, rows)


def _time_record(project: Project, timing: Timing) -> dict[str, Any]:
    return {"location": _location(project, timing), "directive": timing.directive, "backend": timing.backend,
            "contentHash": timing.content_hash, "seconds": timing.seconds, "peakMemoryMb": timing.peak_memory_mb,
            "generatedAt": timing.generated_at}


def _print_times(project: Project, slowest: list[Timing]) -> None:
    if slowest:
        rows = [[_location(project, t), t.directive, t.backend, f"{t.seconds:.2f}", megabytes(t.peak_memory_mb),
                 t.content_hash[:12]] for t in slowest]
        print(table(["document:line", "directive", "framework", "seconds", "peak MiB", "hash"], rows))
    total = sum(t.seconds for t in slowest)
    print(f"{len(slowest)} executed figure{'s' if len(slowest) != 1 else ''} with recorded times, "
          f"{total:.2f} s in all (slowest first)")


def _location(project: Project, timing: Timing) -> str:
    request = next(r for r in project.requests if r.content_hash == timing.content_hash)
    return project.location(request)
