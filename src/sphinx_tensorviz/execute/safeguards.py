"""What the execution phase does around the workers so that hostile or unlucky code cannot
hurt the build: refuse to run unsandboxed when the sandbox was asked for, set aside files
that lesson code put into the store, keep results in memory when the store cannot be
written, and pass on the workers' notes (truncated output) as located warnings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.limits import Limits
from ..core.request import ExecutionRequest
from ..store.artifacts import ArtifactStore
from ..store.guard import Intruder, StoreListing, set_aside_intruders
from ..warnings_ import Subtype, warn
from .caches import cache_mounts
from .runner import Outcome, passed_environment
from .sandbox import refused_folders, sandbox_problem

#: file times come from the kernel's coarse clock, a few milliseconds behind time.time()
_CLOCK_SLACK = 0.05


def sandbox_refused(sandbox: str) -> bool:
    """``True`` (with a warning) when ``tensorviz_sandbox`` names a sandbox that cannot run here."""
    problem = sandbox_problem(sandbox)
    if problem is None:
        return False
    warn(f"tensorviz_sandbox = {sandbox!r}, but {problem}; nothing was executed (lesson code never runs "
         "outside the sandbox you asked for). Fix the sandbox, build with tensorviz_sandbox = '' if you trust "
         "the code, or use tensorviz_execution_mode = 'cache-only'", Subtype.config)
    return True


def report_sandbox_exclusions(sandbox: str, python: str, compilation_cache: bool, srcdir: Path,
                              requests: list[ExecutionRequest]) -> None:
    """Warn, at the first figure that runs, about each folder the workers would need (on their
    ``sys.path``, or the course folder itself) that the sandbox leaves out because it would expose
    the home folder or what lies beside the course."""
    if not sandbox or not requests:
        return
    first = min(requests, key=lambda r: (r.docname, r.lineno))
    inherited = tuple(sorted(passed_environment().items()))
    for folder in refused_folders(python, inherited, srcdir, tuple(cache_mounts(compilation_cache))):
        warn(f"tensorviz_sandbox = {sandbox!r}: the sandbox does not mount {folder}, which the workers' sys.path "
             "(or the course) needs, so lesson code there cannot read or import from it. Remove it from PYTHONPATH, "
             "put the modules the lessons import into the course folder or an installed package, and keep the "
             "course in a folder of its own", Subtype.config, location=(first.docname, first.lineno))


def check_store_untouched(store: ArtifactStore, before: StoreListing, outcomes: dict[str, Outcome],
                          requests: dict[str, ExecutionRequest]) -> None:
    """Warn about, and set aside, files that appeared or changed in the store while jobs ran."""
    try:
        with store.lock():
            intruders = set_aside_intruders(store, before)
    except OSError:  # no lock in an unwritable store: no build can be writing to it either
        intruders = set_aside_intruders(store, before)
    for intruder in intruders:
        suspects = _suspects(intruder, outcomes, requests)
        where = ", ".join(f"{r.docname}:{r.lineno}" for r in suspects) or "unknown"
        warn(f"the artifact store changed while lesson code ran: {intruder.name} ({intruder.change}) was not "
             f"written by a build; {intruder.fate}, and not used. Lesson code must not write into "
             f"{store.root.name}/ (code that ran then: {where})", Subtype.store,
             location=(suspects[0].docname, suspects[0].lineno) if suspects else None)


def _suspects(intruder: Intruder, outcomes: dict[str, Outcome],
              requests: dict[str, ExecutionRequest]) -> list[ExecutionRequest]:
    """The jobs that ran when the file was written (all of them if none matches in time).

    Jobs whose run holds the file's time exactly come first: a job forked by a warm pool starts
    within milliseconds of the previous one's end, inside the clock's slack.
    """
    def running(slack: float) -> list[str]:
        return [h for h, o in outcomes.items() if o.started - slack <= intruder.mtime <= o.ended + slack]

    chosen = running(0.0) or running(_CLOCK_SLACK) or list(outcomes)
    return sorted((requests[h] for h in chosen if h in requests), key=lambda r: (r.docname, r.lineno))


def write_or_hold(store: ArtifactStore, request: ExecutionRequest, kind: str, document: dict[str, Any],
                  write: Callable[[], Any]) -> None:
    """Run ``write``; if the store cannot be written, keep ``document`` in memory and warn."""
    try:
        write()
    except OSError as exc:
        store.hold(kind, request.content_hash, document)
        what = "result" if kind == "artifact" else "failure record"
        warn(f"{request.directive}: cannot write to the artifact store {store.location} ({exc}); the {what} is "
             "shown from memory and not stored, so the next build executes it again. Make the folder "
             "writable, or build with tensorviz_execution_mode = 'cache-only'", Subtype.store,
             location=(request.docname, request.lineno))


def limit_raised(failure: dict[str, Any], limits: Limits) -> bool:
    """A result refused under a lower value of the ``tensorviz_max_*`` limit it exceeded deserves
    another try (the advice in the warning is to raise the limit)."""
    return failure.get("subtype") == "limit" and limits.raised_since(failure.get("limits"))


def report_notes(request: ExecutionRequest, outcome: Outcome) -> None:
    """The worker's notes on what it had to cut (e.g. printed output over tensorviz_max_stdout_kb)."""
    for note in outcome.result.notes:
        warn(f"{request.directive}: {note}", Subtype.limit, location=(request.docname, request.lineno))
