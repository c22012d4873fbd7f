"""The execution phase of a build: after all documents are read, run every cache miss.

:func:`stale_documents` answers ``env-get-outdated`` (documents whose figures have no
artifact are re-read, so their warnings appear on every build) and :func:`execute_all`
runs on ``env-updated`` (execute, store, print the summary line); the Sphinx glue
(:mod:`sphinx_tensorviz.extension`) connects them, and ``tensorviz execute`` calls the
second one itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from ..config import Settings
from ..core.frameworks import FRAMEWORKS_CHECK
from ..core.limits import Limits
from ..core.request import TRAINED, ExecutionRequest
from ..core.state import all_requests, failing_claims_of, requests_of
from ..core.sweep import SWEEP_CHECK
from ..store.artifacts import ArtifactStore, StoreProblem
from ..store.build import build_store
from ..warnings_ import Subtype, warn
from .course_kinds import course_kind
from .fingerprint import EnvironmentCheck
from .frameworks_points import framework_job_points
from .trained import trained_weights, training_of
from .worker.sweep_check import sweep_job_points

#: the figure-less jobs that read stored artifacts (a sweep's points, the frameworks' results), and how
STORED_INPUTS = {SWEEP_CHECK: sweep_job_points, FRAMEWORKS_CHECK: framework_job_points}

if TYPE_CHECKING:
    from ..core.protocol import Job
    from .runner import Outcome

logger = logging.getLogger("sphinx_tensorviz")


def stale_documents(env: BuildEnvironment, conf: Settings, added: set[str], changed: set[str],
                    removed: set[str]) -> list[str]:
    """Documents to re-read although unchanged: those showing a missing or failed figure, or an
    artifact whose file changed since it was validated."""
    store = build_store(env, conf)
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
    store = build_store(env, conf)
    first: dict[str, ExecutionRequest] = {}
    for request in requests:
        first.setdefault(request.content_hash, request)
    environment = EnvironmentCheck(conf.python, conf.timeout)
    store.prefetch(first)
    to_run = {h: r for h, r in first.items() if _needs_run(h, r, store, conf, environment)}
    outcomes: dict[str, Outcome] = {}
    if to_run:  # the machinery of running jobs is imported only when there are some
        from .batch import run_batches

        outcomes = run_batches(to_run, lambda r: job_for(r, env, store), store, conf, environment, verbosity)
    stored = {h: store.read_artifact(h) for h in first}
    if conf.mode != "off":  # "off" is how the tensorviz command reads a project: it only looks
        _upload_missing(store, requests, stored)
        _repeat_notes(requests, outcomes, stored)
    failing = failing_claims_of(env)  # re-read on the next build, so their claims warn again
    failing.clear()
    failing.update(r.docname for r in requests if isinstance(found := stored[r.content_hash], dict)
                   and any(not c["passed"] for c in found.get("checks", [])))
    _summarise(requests, outcomes, stored, store)


def _repeat_notes(requests: list[ExecutionRequest], outcomes: dict[str, Outcome],
                  stored: dict[str, dict[str, object] | StoreProblem | None]) -> None:
    """Warn again about what the worker had to cut (the artifact's ``notes``) for every figure drawn
    from the store: its result is incomplete on every build, not only on the one that ran it."""
    for request in requests:
        found = stored[request.content_hash]
        if request.content_hash in outcomes or not isinstance(found, dict):
            continue  # a job of this build warned itself (execute/safeguards.report_notes)
        for note in found.get("notes") or ():
            warn(f"{request.directive}: {note} (recorded when it ran)", Subtype.limit,
                 location=(request.docname, request.lineno))


def _upload_missing(store: ArtifactStore, requests: list[ExecutionRequest],
                    stored: dict[str, dict[str, object] | StoreProblem | None]) -> None:
    """End the build with every artifact it used in the shared store: a remote store may have lost
    what this machine's cache holds, and another machine would then find nothing."""
    used = [r for r in requests if isinstance(stored[r.content_hash], dict)]
    try:
        uploaded = store.upload_missing(r.content_hash for r in used)
    except OSError as exc:
        first = used[0] if used else None
        warn(f"cannot make sure the store {store.location} holds this build's artifacts ({exc}); another "
             "machine may execute them again. Fix access to the store and build again", Subtype.store,
             location=(first.docname, first.lineno) if first else None)
        return
    if uploaded:
        logger.info("tensorviz: uploaded %d artifact(s) the store lacked to %s, from this machine's cache",
                    len(uploaded), store.location)


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
    failure = store.check_failure(content_hash)
    if isinstance(failure, StoreProblem):
        warn(f"failure record failures/{failure.path.name} {failure.reason}; it is ignored "
             "and the code runs again", Subtype.store, location=(request.docname, request.lineno))
        return True
    if failure is None:
        return True
    from .safeguards import limit_raised

    return environment.retry_reason(failure) is not None or limit_raised(failure, Limits.from_settings(conf))


def job_for(request: ExecutionRequest, env: BuildEnvironment, store: ArtifactStore | None = None) -> Job | None:
    """The worker's job for ``request``; ``None`` for a cross-sweep check while a point of its sweep
    (for a frameworks' comparison, a framework) has no stored artifact (nothing to check yet), or when no ``store`` is given to read them from, and
    for a figure whose trained model's weights cannot be found (:mod:`.trained` warns)."""
    from ..core.protocol import Job  # only a build that runs something needs the protocol

    srcdir = Path(env.srcdir).resolve()
    points = None
    if request.directive in STORED_INPUTS:
        reads = STORED_INPUTS[request.directive]
        points = reads(request.inputs, store.read_artifact) if store is not None else None
        if points is None:
            return None
    if request.inline_code is not None:
        doc = Path(env.doc2path(request.docname))
        place = {"inline_code": request.inline_code, "inline_name": f"{doc}:{request.lineno}",
                 "search_path": (str(doc.parent), str(srcdir))}
    else:
        entry = srcdir / request.entry
        place = {"entry_path": str(entry), "search_path": (str(entry.parent), str(srcdir))}
    options = request.options
    if training_of(request) is not None:  # ``:model: @name``: the job loads the snapshot's weights
        weights = trained_weights(request, store)
        if weights is None:
            return None
        options = {**options, TRAINED: {**options[TRAINED], "weights": weights}}
    kind = course_kind(request.runner, srcdir)  # a kind the course keeps in a folder of its own (``_ext/``)
    if kind is not None and str(kind.folder) not in place["search_path"]:
        place["search_path"] = (*place["search_path"], str(kind.folder))
    return Job(
        directive=request.directive, runner=request.runner, backend=request.backend,
        seed=request.seed, function=request.function, inputs=request.inputs, options=options,
        device=request.device, entry=request.entry, srcdir=str(srcdir),
        files=dict(request.files),  # carried as text when the job runs elsewhere (Dask)
        sweep_points=None if points is None else tuple(points), **place,
    )
