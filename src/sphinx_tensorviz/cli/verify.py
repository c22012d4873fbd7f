"""``tensorviz verify``: execute cached artifacts again and compare, without touching the store.

A determinism check: the same code, inputs and seed must give the same numbers. Heatmap
values, graph outputs and activations are compared within a tolerance derived from the dtype
they were computed in (``|new - old| <= atol + rtol * |old|``, see
:mod:`..execute.tolerance`: float32 results differ in the last bits between CPUs, so a
bit-exact check would fail on every machine but the recording one); ``--rtol``/``--atol``
override it. Graph structure (layer ids and connections), labels, shapes and check outcomes
must be equal.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any

from sphinx.util.display import status_iterator

from ..core.state import all_requests
from ..core.words import plural
from ..execute.dask_executor import executor_for
from ..execute.phase import job_for
from ..execute.runner import run_settings
from ..execute.safeguards import check_store_untouched, sandbox_refused
from ..execute.tolerance import ASSUMED_DTYPE, default_tolerance, within
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


@dataclass(frozen=True)
class Group:
    """One array compared: where it lives, its dtype, and the tolerance used for it."""

    where: str
    dtype: str
    count: int
    rtol: float
    atol: float
    assumed: bool  #: the artifact did not record the dtype

    def describe(self) -> str:
        note = " (dtype not recorded: compared as float32)" if self.assumed else ""
        return f"{plural(self.count, f'{self.dtype} value')} in {self.where} within rtol={self.rtol:.2g}, atol={self.atol:.2g}{note}"


@dataclass
class Comparison:
    """Differences found between a stored and a recomputed ``data`` (and checks).

    ``rtol``/``atol`` override the tolerances that are otherwise derived per array from the
    dtype it was computed in and its largest magnitude (:mod:`..execute.tolerance`).
    """

    rtol: float | None = None
    atol: float | None = None
    problems: list[str] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    largest: float = 0.0
    where: str = ""

    @property
    def compared(self) -> int:
        return sum(g.count for g in self.groups)

    def array(self, old: Any, new: Any, where: str, dtype: str | None) -> None:
        """Compare one recorded array (nested lists of numbers) with its re-run."""
        if _shape(old) != _shape(new):
            self.problems.append(f"{where}: shape differs ({_shape(old)} stored, {_shape(new)} now)")
            return
        pairs = [(index, a, b) for (index, a), (_, b) in zip(_flat(old), _flat(new))]
        largest = max((abs(float(a)) for _, a, _ in pairs), default=0.0)
        rtol, atol = default_tolerance(dtype or ASSUMED_DTYPE, largest)
        rtol = rtol if self.rtol is None else self.rtol
        atol = atol if self.atol is None else self.atol
        self.groups.append(Group(where, dtype or ASSUMED_DTYPE, len(pairs), rtol, atol, dtype is None))
        for index, a, b in pairs:
            diff = abs(float(b) - float(a))
            if not math.isfinite(diff):
                diff = math.inf
            if diff > self.largest or (diff == self.largest and not self.where):
                self.largest, self.where = diff, f"{where}{index}: stored {a!r}, now {b!r}"
            if not within(float(a), float(b), rtol, atol):
                self.problems.append(f"{where}{index}: stored {a!r}, now {b!r} (difference {diff:.3g}, "
                                     f"allowed {atol + rtol * abs(float(a)):.3g} for {dtype or ASSUMED_DTYPE})")

    def equal(self, old: Any, new: Any, what: str) -> None:
        if old != new:
            self.problems.append(f"{what} differs: stored {_brief(old)}, now {_brief(new)}")


def _flat(value: Any, index: str = "") -> list[tuple[str, Any]]:
    """``(index, number)`` pairs of nested lists, indexed like ``[1][2]``."""
    if isinstance(value, list):
        return [pair for n, item in enumerate(value) for pair in _flat(item, f"{index}[{n}]")]
    return [(index, value)]


def _shape(value: Any) -> str:
    dims = []
    while isinstance(value, list):
        dims.append(len(value))
        value = value[0] if value else None
    return "x".join(map(str, dims)) or "scalar"


def _brief(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(stored: dict[str, Any], result: dict[str, Any], rtol: float | None = None,
            atol: float | None = None) -> Comparison:
    """Compare a stored artifact with a worker's result document."""
    cmp = Comparison(rtol, atol)
    old, new = stored["data"], result.get("data", {})
    cmp.equal(old.get("kind"), new.get("kind"), "data.kind")
    if old.get("kind") == "heatmap" and new.get("kind") == "heatmap":
        for key in ("rows", "columns", "unit", "diverging"):
            cmp.equal(old.get(key), new.get(key), f"data.{key}")
        cmp.array(old["values"], new.get("values"), "data.values", old.get("dtype"))
    elif old.get("kind") == "graph" and new.get("kind") == "graph":
        cmp.equal([layer["id"] for layer in old.get("layers", [])],
                  [layer["id"] for layer in new.get("layers", [])], "graph structure (layer ids)")
        cmp.equal([(c.get("source"), c.get("target")) for c in old.get("connections", [])],
                  [(c.get("source"), c.get("target")) for c in new.get("connections", [])],
                  "graph structure (connections)")
        old_out, new_out = old.get("output") or {}, new.get("output") or {}
        cmp.equal(old_out.get("shape"), new_out.get("shape"), "data.output.shape")
        if "values" in old_out:
            cmp.array(old_out["values"], new_out.get("values"), "data.output.values", old_out.get("dtype"))
        old_act, new_act = old.get("activations") or {}, new.get("activations") or {}
        cmp.equal(sorted(old_act), sorted(new_act), "activation checkpoints")
        for name in sorted(set(old_act) & set(new_act)):
            cmp.array(old_act[name].get("values"), new_act[name].get("values"),
                      f"data.activations[{name}].values", old_act[name].get("dtype"))
    elif old.get("kind") == "sweep-check" and new.get("kind") == "sweep-check":
        # re-run over the same stored points, so the check values are computed from the same numbers
        cmp.equal(old.get("points"), new.get("points"), "data.points")
        new_values = {c["name"]: c.get("value") for c in result.get("checks", [])}
        for check in stored.get("checks", []):
            if check.get("value") is not None:
                cmp.array([check["value"]], [new_values.get(check["name"])], f"checks[{check['name']}].value",
                          "float64")
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
