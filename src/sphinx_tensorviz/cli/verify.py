"""``tensorviz verify``: execute cached artifacts again and compare, without touching the store.

A determinism check: the same code, inputs and seed must give the same numbers. Each kind says
what it compares (heatmap values; graph outputs and activations), within a tolerance derived from
the dtype they were computed in (``|new - old| <= atol + rtol * |old|``, see
:mod:`..execute.tolerance`: float32 results differ in the last bits between CPUs, so a
bit-exact check would fail on every machine but the recording one); ``--rtol``/``--atol``
override it. Graph structure (layer ids and connections), labels, shapes and check outcomes
must be equal.
"""

from __future__ import annotations

import argparse
from typing import Any

from sphinx.util.display import status_iterator

from ..core.kinds import kind_named
from ..core.state import all_requests
from ..core.words import plural
from ..execute.compare import Comparison
from ..execute.dask_executor import executor_for
from ..execute.phase import job_for
from ..execute.runner import run_settings
from ..execute.safeguards import check_store_untouched, sandbox_refused
from ..store.guard import list_store
from .project import CliError, add_project_arguments, open_project, print_read_warnings


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify", help="re-execute cached artifacts and compare the values (the store is not changed)",
        description="Execute every cached artifact again in a worker process and compare the new data with "
                    "the stored data. Exits with status 1 if anything differs beyond the tolerance.",
    )
    add_project_arguments(parser)
    parser.add_argument("--rtol", type=float, default=None,
                        help="relative tolerance for every value (default: derived from the dtype each value "
                             "was computed in: 512 ulps for float32/float64, 16 for 16-bit floats, 0 for integers)")
    parser.add_argument("--atol", type=float, default=None,
                        help="absolute tolerance for every value (default: 64 ulps of the dtype times the "
                             "largest magnitude of the array, at least 8 ulps of 1; 0 for integers)")
    parser.add_argument("--doc", action="append", default=[], metavar="DOCNAME",
                        help="verify only the directives of this document (e.g. lessons/intro); may repeat")
    parser.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: tensorviz_workers)")
    parser.set_defaults(run=run)


def compare(stored: dict[str, Any], result: dict[str, Any], rtol: float | None = None,
            atol: float | None = None) -> Comparison:
    """Compare a stored artifact with a worker's result document: the data as its kind compares it
    (:attr:`~..core.kinds.FigureKind.compare`), then every check's outcome."""
    cmp = Comparison(rtol, atol)
    old, new = stored["data"], result.get("data", {})
    cmp.equal(old.get("kind"), new.get("kind"), "data.kind")
    kind = kind_named(old.get("kind"))
    if kind is not None and kind.compare and old.get("kind") == new.get("kind"):
        kind.entry("compare")(cmp, old, new, stored, result)
    old_checks = {c["name"]: c["passed"] for c in stored.get("checks", [])}
    new_checks = {c["name"]: c["passed"] for c in result.get("checks", [])}
    for name in sorted(set(old_checks) | set(new_checks)):
        before, after = old_checks.get(name), new_checks.get(name)
        if before != after:
            cmp.problems.append(f"check {name}: {_outcome(before)} when stored, {_outcome(after)} now")
    return cmp


def _outcome(passed: bool | None) -> str:
    return "absent" if passed is None else ("passed" if passed else "failed")


def run(args: argparse.Namespace) -> int:
    if (args.rtol or 0) < 0 or (args.atol or 0) < 0:
        raise CliError("--rtol and --atol must not be negative")
    overrides = {"tensorviz_workers": args.jobs} if args.jobs else {}
    with open_project(args, overrides) as project:
        project.read()
        print_read_warnings(project)
        env = project.app.env
        known = set(env.found_docs)
        unknown = [d for d in args.doc if d not in known]
        if unknown:
            raise CliError(f"--doc: no document named {', '.join(unknown)} (documents: {', '.join(sorted(known))})")
        chosen: dict[str, Any] = {}
        for request in all_requests(env):
            if args.doc and request.docname not in args.doc:
                continue
            stored = project.store.read_artifact(request.content_hash)
            if isinstance(stored, dict):
                chosen.setdefault(request.content_hash, (request, stored))
        if not chosen:
            print("nothing to verify: no cached artifacts" + (" in " + ", ".join(args.doc) if args.doc else ""))
            return 0
        conf = project.conf
        if sandbox_refused(conf.sandbox):
            raise CliError(f"nothing verified: tensorviz_sandbox = {conf.sandbox!r} cannot run here")
        locations = {h: project.location(request) for h, (request, _) in chosen.items()}
        project.status.open = True  # the progress bar
        before = list_store(project.store)
        outcomes = executor_for(conf)(  # local workers or the Dask cluster, as for a build
            {h: job for h, (request, _) in chosen.items() if (job := job_for(request, env, project.store)) is not None},
            run_settings(conf),
            progress=lambda items, n: status_iterator(items, "tensorviz: verifying... ", "darkgreen", n,
                                                      project.app.verbosity,
                                                      stringify_func=lambda o: locations[o.key]),
        )
        project.status.open = False
        check_store_untouched(project.store, before, outcomes, {h: r for h, (r, _) in chosen.items()})
    mismatches = 0
    for content_hash, (request, stored) in sorted(chosen.items(), key=lambda kv: (kv[1][0].docname, kv[1][0].lineno)):
        head = f"{locations[content_hash]} {request.directive} [{content_hash[:12]}]"
        outcome = outcomes.get(content_hash)
        if outcome is None:  # a cross-sweep check whose points are no longer all stored
            mismatches += 1
            print(f"FAILED    {head}: a point of its sweep has no stored artifact; build or execute first")
            continue
        if not outcome.ok:
            mismatches += 1
            print(f"FAILED    {head}: {outcome.result.kind.value}: {outcome.result.message}")
            continue
        cmp = compare(stored, outcome.result.to_json(), args.rtol, args.atol)
        largest = f"largest difference {cmp.largest:.3g}" + (f" at {cmp.where}" if cmp.largest else "")
        if cmp.problems:
            mismatches += 1
            print(f"MISMATCH  {head}: {len(cmp.problems)} difference(s); {largest}")
            for problem in cmp.problems[:10]:
                print(f"          {problem}")
            if len(cmp.problems) > 10:
                print(f"          ... and {len(cmp.problems) - 10} more")
        else:
            print(f"ok        {head}: compared {plural(cmp.compared, 'value')}; {largest}")
        for group in cmp.groups:
            print(f"          {group.describe()}")
    total = len(chosen)
    print(f"{total - mismatches} of {plural(total, 'artifact')} reproduced" + (f", {mismatches} did not" if mismatches else ""))
    return 1 if mismatches else 0
