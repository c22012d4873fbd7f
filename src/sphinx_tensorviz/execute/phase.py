"""The execution phase of a build: after all documents are read, run every cache miss.

:func:`stale_documents` answers ``env-get-outdated`` (documents whose figures have no
artifact are re-read, so their warnings appear on every build) and :func:`execute_all`
runs on ``env-updated`` (execute, store, print the summary line); the Sphinx glue
(:mod:`sphinx_tensorviz.extension`) connects them, and ``tensorviz execute`` calls the
second one itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.display import status_iterator

from ..config import Settings
from ..core.artifact import build_artifact, failure_record
from ..core.limits import Limits
from ..core.protocol import RUNNERS, Failure, FailureKind, Job, Success
from ..core.request import ExecutionRequest
from ..core.state import all_requests, failing_claims_of, requests_of, trusted_of
from ..core.sweep import SWEEP_CHECK
from ..store.artifacts import ArtifactStore, StoreProblem
from ..store.guard import list_store
from ..warnings_ import Subtype, warn
from .dask_executor import executor_for
from .fingerprint import EnvironmentCheck
from .runner import Outcome, run_settings
from .safeguards import check_store_untouched, limit_raised, report_notes, sandbox_refused, write_or_hold
from .sweep_check import sweep_job_points

logger = logging.getLogger("sphinx_tensorviz")

#: what the runner calls with the finished outcomes and their count, to show progress
Progress = Callable[[Iterable[Outcome], int], Iterator[Outcome]]


def stale_documents(env: BuildEnvironment, conf: Settings, added: set[str], changed: set[str],
                    removed: set[str]) -> list[str]:
    """Documents to re-read although unchanged: those showing a missing or failed figure, or an
    artifact whose file changed since it was validated."""
    store = ArtifactStore.for_settings(conf, trusted_of(env))
    stale = set(failing_claims_of(env)) - removed
    store.prefetch(r.content_hash for requests in requests_of(env).values() for r in requests)
    stale |= {
        docname
        for docname, requests in requests_of(env).items()
        if docname not in removed
        and (conf.mode == "force" or any(
            not store.has_artifact(r.content_hash) or store.changed_since_validated(r.content_hash) for r in requests
        ))
    }
    return sorted(stale)


def execute_all(env: BuildEnvironment, conf: Settings, verbosity: int = 0) -> None:
    """Execute every request of the project whose artifact is missing, store what comes back, and
    print the ``tensorviz: N executed, N cached, N failed`` line."""
    requests = all_requests(env)
    if not requests:
        return
    store = ArtifactStore.for_settings(conf, trusted_of(env))
    first: dict[str, ExecutionRequest] = {}
    for request in requests:
        first.setdefault(request.content_hash, request)
    environment = EnvironmentCheck(conf.python, conf.timeout)
    store.prefetch(first)
    to_run = {h: r for h, r in first.items() if _needs_run(h, r, store, conf, environment)}
    if to_run and sandbox_refused(conf.sandbox):
        to_run = {}
    outcomes: dict[str, Outcome] = {}
    # two stages: cross-sweep checks read the stored values of the points the first stage computes
    for stage in (False, True):
        jobs = {h: job for h, r in to_run.items()
                if (r.directive == SWEEP_CHECK) == stage and (job := job_for(r, env, store)) is not None}
        if not jobs:
            continue
        before = list_store(store)
        ran = executor_for(conf)(jobs, run_settings(conf), progress=progress_bar(to_run, verbosity))
        check_store_untouched(store, before, ran, to_run)
        for content_hash, outcome in sorted(ran.items()):
            _store_outcome(store, to_run[content_hash], outcome, environment)
        outcomes.update(ran)
    stored = {h: store.read_artifact(h) for h in first}
    failing = failing_claims_of(env)  # re-read on the next build, so their claims warn again
    failing.clear()
    failing.update(r.docname for r in requests if isinstance(found := stored[r.content_hash], dict)
                   and any(not c["passed"] for c in found.get("checks", [])))
    _summarise(requests, outcomes, stored, store)


def _summarise(requests: list[ExecutionRequest], outcomes: dict[str, Outcome],
               stored: dict[str, dict[str, object] | StoreProblem | None], store: ArtifactStore) -> None:
    """The summary line: "executed" counts what ran in this build, failures included; "failed" every
    figure that has no artifact because its code failed, now or in an earlier build (recorded failures)."""
    ran = sum(1 for r in requests if r.content_hash in outcomes)
    cached = sum(1 for r in requests if r.content_hash not in outcomes and isinstance(stored[r.content_hash], dict))
    failed = sum(1 for r in requests if not isinstance(stored[r.content_hash], dict)
                 and (r.content_hash in outcomes or store.read_failure(r.content_hash) is not None))
    missing = len(requests) - cached - failed - sum(
        1 for r in requests if r.content_hash in outcomes and isinstance(stored[r.content_hash], dict))
    logger.info("tensorviz: %d executed, %d cached, %d failed%s", ran, cached, failed,
                f", {missing} not computed" if missing else "")


def _needs_run(content_hash: str, request: ExecutionRequest, store: ArtifactStore, conf: Settings,
               environment: EnvironmentCheck) -> bool:
    if conf.mode in ("off", "cache-only"):
        return False
    if conf.mode == "force":
        return True
    found = store.read_artifact(content_hash)
    if isinstance(found, StoreProblem):
        warn(f"stored artifact {found.path.name} {found.reason}; executing again", Subtype.store,
             location=(request.docname, request.lineno))
        return True
    if found is not None:
        return False
    failure = store.read_failure(content_hash)
    if failure is None:
        return True
    return environment.retry_reason(failure) is not None or limit_raised(failure, Limits.from_settings(conf))


def job_for(request: ExecutionRequest, env: BuildEnvironment, store: ArtifactStore | None = None) -> Job | None:
    """The worker's job for ``request``; ``None`` for a cross-sweep check while a point of its sweep
    has no stored artifact (nothing to check yet), or when no ``store`` is given to read them from."""
    srcdir = Path(env.srcdir).resolve()
    points = None
    if request.directive == SWEEP_CHECK:
        points = sweep_job_points(request.inputs, store.read_artifact) if store is not None else None
        if points is None:
            return None
    if request.inline_code is not None:
        doc = Path(env.doc2path(request.docname))
        place = {"inline_code": request.inline_code, "inline_name": f"{doc}:{request.lineno}",
                 "search_path": (str(doc.parent), str(srcdir))}
    else:
        entry = srcdir / request.entry
        place = {"entry_path": str(entry), "search_path": (str(entry.parent), str(srcdir))}
    return Job(
        directive=request.directive, runner=RUNNERS[request.directive], backend=request.backend,
        seed=request.seed, function=request.function, inputs=request.inputs, options=request.options,
        device=request.device, entry=request.entry, srcdir=str(srcdir),
        files=dict(request.files),  # carried as text when the job runs elsewhere (Dask)
        sweep_points=None if points is None else tuple(points), **place,
    )


def _store_outcome(store: ArtifactStore, request: ExecutionRequest, outcome: Outcome,
                   environment: EnvironmentCheck) -> None:
    """Store an artifact or a failure record (only failures need the environment's fingerprint, which
    takes a scan of the installed packages)."""
    report_notes(request, outcome)
    result = outcome.result
    if isinstance(result, Success):
        try:
            artifact = build_artifact(request, result, execution_facts(outcome))
            write_or_hold(store, request, "artifact", artifact, lambda: store.write_artifact(artifact))
            return
        except (ValueError, KeyError, TypeError) as exc:  # an invalid result fails the figure, not the build
            result = Failure(FailureKind.bad_result, f"the result cannot be stored: {exc}")
    record = failure_record(result, environment.fingerprint)
    write_or_hold(store, request, "failure", {"contentHash": request.content_hash, **record},
                  lambda: store.write_failure(request.content_hash, record))


def execution_facts(outcome: Outcome) -> dict[str, float]:
    """Wall time of the job as the build saw it, and the worker's peak resident memory."""
    facts: dict[str, float] = {}
    if outcome.ended:
        facts["seconds"] = round(outcome.ended - outcome.started, 3)
    peak = outcome.result.execution.get("peakMemoryMb")
    if peak is not None:
        facts["peakMemoryMb"] = float(peak)
    return facts


def progress_bar(requests: dict[str, ExecutionRequest], verbosity: int,
                 what: str = "executing") -> Progress:
    """Sphinx's progress bar over finished jobs, each named by its page and line."""
    def shown(outcome: Outcome) -> str:
        request = requests[outcome.key]
        return f"{request.docname}:{request.lineno}"

    return lambda items, length: status_iterator(items, f"tensorviz: {what}... ", "darkgreen", length, verbosity,
                                                 stringify_func=shown)
