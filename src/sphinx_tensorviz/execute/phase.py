"""The execution phase of a build: after all documents are read, run every cache miss.

Connected to ``env-get-outdated`` (documents whose figures have no artifact are
re-read, so their warnings appear on every build) and ``env-updated`` (execute,
store, print the summary line).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging
from sphinx.util.display import status_iterator

from ..config import Settings, app_of, settings
from ..core.hashing import SCHEMA_VERSION
from ..core.limits import Limits
from ..core.request import ExecutionRequest
from ..core.state import (
    all_requests,
    catalogues_of,
    failing_claims_of,
    requests_of,
    trusted_of,
)
from ..core.sweep import SWEEP_CHECK
from ..store.artifacts import ArtifactStore, StoreProblem
from ..store.guard import list_store
from ..warnings_ import Subtype, warn
from .dask_executor import executor_for
from .fingerprint import EnvironmentCheck
from .runner import Outcome, run_settings
from .safeguards import (
    check_store_untouched,
    limit_raised,
    report_notes,
    sandbox_refused,
    write_or_hold,
)
from .sweep_check import sweep_job_points

logger = logging.getLogger("sphinx_tensorviz")


def outdated_docs(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """Documents to re-read although unchanged: those showing a missing or failed figure or an
    artifact whose file changed since it was validated, and the catalogue pages when any document
    changed."""
    conf = settings(app)
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
    if added or changed or removed:  # a lesson may have changed: catalogues list every lesson
        stale.update(d for d in catalogues_of(env) if d not in removed)
    return sorted(stale)


def execute_phase(app: Sphinx, env: BuildEnvironment) -> None:
    requests = all_requests(env)
    if not requests:
        return
    conf = settings(app)
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
        ran = executor_for(conf)(jobs, run_settings(conf), progress=lambda items, n: _progress(app, items, n, to_run))
        check_store_untouched(store, before, ran, to_run)
        for content_hash, outcome in sorted(ran.items()):
            _store_outcome(store, to_run[content_hash], outcome, environment)
        outcomes.update(ran)
    stored = {h: store.read_artifact(h) for h in first}
    failing = failing_claims_of(env)
    failing.clear()
    failing.update(
        r.docname for r in requests
        if isinstance(found := stored[r.content_hash], dict) and any(not c["passed"] for c in found.get("checks", []))
    )
    ran = sum(1 for r in requests if r.content_hash in outcomes)
    cached = sum(1 for r in requests if r.content_hash not in outcomes and isinstance(stored[r.content_hash], dict))
    failed = sum(1 for r in requests if not isinstance(stored[r.content_hash], dict)
                 and (r.content_hash in outcomes or store.read_failure(r.content_hash) is not None))
    missing = len(requests) - cached - failed - sum(
        1 for r in requests if r.content_hash in outcomes and isinstance(stored[r.content_hash], dict))
    # "executed" counts what ran in this build, failures included; "failed" counts every figure that
    # has no artifact because its code failed, now or in an earlier build (recorded failures)
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


def job_for(request: ExecutionRequest, env: BuildEnvironment,
            store: ArtifactStore | None = None) -> dict[str, Any] | None:
    """The worker's job document for ``request``; ``None`` for a cross-sweep check while a point of
    its sweep has no stored artifact (nothing to check yet)."""
    srcdir = Path(env.srcdir).resolve()
    job: dict[str, Any] = {
        "directive": request.directive,
        "backend": request.backend,
        "seed": request.seed,
        "function": request.function,
        "inputs": request.inputs,
        "options": request.options,
        "device": request.device,
        "entry": request.entry,
        "srcdir": str(srcdir),
        "files": dict(request.files),  # carried as text when the job runs elsewhere (Dask)
    }
    if request.directive == SWEEP_CHECK:
        store = store or ArtifactStore.for_settings(settings(app_of(env)), trusted_of(env))
        points = sweep_job_points(request.inputs, store.read_artifact)
        if points is None:
            return None
        job["sweepPoints"] = points
    if request.inline_code is not None:
        doc = Path(env.doc2path(request.docname))
        job.update(inlineCode=request.inline_code, inlineName=f"{doc}:{request.lineno}",
                   searchPath=[str(doc.parent), str(srcdir)])
    else:
        entry = srcdir / request.entry
        job.update(entryPath=str(entry), searchPath=[str(entry.parent), str(srcdir)])
    return job


def build_artifact(request: ExecutionRequest, result: dict[str, Any],
                   execution: dict[str, float] | None = None) -> dict[str, Any]:
    """The stored document for a successful execution.

    ``execution`` (wall time and peak memory of this run) sits beside ``generatedAt``: both
    are facts of one run, which determinism checks ignore.
    """
    environment = result["environment"]
    artifact: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "lessonId": request.lesson_id,
        "contentHash": request.content_hash,
        "rendererHash": request.renderer_hash,
        "kind": "executed",
        "generatedAt": datetime.now(timezone.utc).isoformat(),
        **({"execution": execution} if execution else {}),
        "provenance": f"recorded_{environment['backend']}_computation",
        "environment": environment,
        "stdout": result.get("stdout", ""),
        "request": request.hashed_inputs(),
        "data": result["data"],
    }
    for optional in ("checks", "diagram"):
        if optional in result:
            artifact[optional] = result[optional]
    return artifact


def _store_outcome(store: ArtifactStore, request: ExecutionRequest, outcome: Outcome,
                   environment: EnvironmentCheck) -> None:
    """Store an artifact or a failure record (only failures need the environment's fingerprint, which
    takes a scan of the installed packages)."""
    report_notes(request, outcome)
    if outcome.ok:
        try:
            artifact = build_artifact(request, outcome.result, execution_facts(outcome))
            write_or_hold(store, request, "artifact", artifact, lambda: store.write_artifact(artifact))
            return
        except (ValueError, KeyError, TypeError) as exc:  # an invalid result fails the figure, not the build
            result = {"ok": False, "subtype": "bad_result", "message": f"the result cannot be stored: {exc}"}
    else:
        result = outcome.result
    record = {
        "subtype": result.get("subtype", "execution"),
        "message": result.get("message", ""),
        "traceback": result.get("traceback", ""),
        "stdout": result.get("stdout", ""),
        "timeout": result.get("timeout"),
        "environment": environment.fingerprint,
        **({"limits": result["limits"]} if "limits" in result else {}),  # a limit failure: under which limits
        "recordedAt": datetime.now(timezone.utc).isoformat(),
    }
    write_or_hold(store, request, "failure", {"contentHash": request.content_hash, **record},
                  lambda: store.write_failure(request.content_hash, record))


def execution_facts(outcome: Outcome) -> dict[str, float]:
    """Wall time of the job as the build saw it, and the worker's peak resident memory."""
    facts: dict[str, float] = {}
    if outcome.ended:
        facts["seconds"] = round(outcome.ended - outcome.started, 3)
    peak = outcome.result.get("execution", {}).get("peakMemoryMb")
    if peak is not None:
        facts["peakMemoryMb"] = float(peak)
    return facts


def _progress(
    app: Sphinx, items: Iterable[Outcome], length: int, requests: dict[str, ExecutionRequest]
) -> Iterator[Outcome]:
    def label(outcome: Outcome) -> str:
        request = requests[outcome.key]
        return f"{request.docname}:{request.lineno}"

    return status_iterator(items, "tensorviz: executing... ", "darkgreen", length, app.verbosity,
                           stringify_func=label)
