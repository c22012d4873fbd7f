"""Running the jobs of a build: in waves, then storing what each job produced.

A job waits for the artifacts it depends on: a figure that loads a trained model (``:model: @name``)
runs after its training, and cross-sweep checks read the stored values of the points computed before. Imported by the execution phase only when something must run: a build whose
figures are all cached never loads the runner, the pools or Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from sphinx.util.display import status_iterator

from ..config import Settings
from ..core.artifact import build_artifact, failure_record
from ..core.frameworks import FRAMEWORKS_CHECK
from ..core.protocol import Failure, FailureKind, Job, Success
from ..core.request import ExecutionRequest
from ..core.sweep import SWEEP_CHECK
from ..store.artifacts import ArtifactStore
from ..store.guard import list_store
from ..store.returned_files import store_returned_file
from ..warnings_ import Subtype, warn
from .dask_executor import executor_for
from .fingerprint import EnvironmentCheck
from .interrupt import Interrupted
from .runner import Outcome, run_settings
from .safeguards import (
    check_store_untouched,
    report_notes,
    report_sandbox_exclusions,
    sandbox_refused,
    write_or_hold,
)
from .trained import training_of

#: what the runner calls with the finished outcomes and their count, to show progress
Progress = Callable[[Iterable[Outcome], int], Iterator[Outcome]]


def run_batches(to_run: dict[str, ExecutionRequest], job_for: Callable[[ExecutionRequest], Job | None],
                store: ArtifactStore, conf: Settings, environment: EnvironmentCheck,
                verbosity: int) -> dict[str, Outcome]:
    """Run every request of ``to_run`` (by content hash) and store its artifact or failure record;
    nothing runs when the sandbox asked for cannot (that is a warning)."""
    outcomes: dict[str, Outcome] = {}
    if sandbox_refused(conf.sandbox):
        return outcomes
    waves = {h: wave(r, to_run) for h, r in to_run.items()}
    for number in sorted(set(waves.values())):
        # each job is made when its wave starts: by then what it depends on is stored
        jobs = {h: job for h, r in to_run.items() if waves[h] == number and (job := job_for(r)) is not None}
        if not jobs:
            continue
        if not outcomes:  # once: every job of a build has the same course folder
            report_sandbox_exclusions(conf.sandbox, conf.python, conf.compilation_cache,
                                      Path(next(iter(jobs.values())).srcdir), list(to_run.values()))
        before = list_store(store)
        interrupted: Interrupted | None = None
        try:
            ran = executor_for(conf)(jobs, run_settings(conf), progress=progress_bar(to_run, verbosity))
        except Interrupted as stopped:  # Ctrl-C: store what finished, then stop the build
            ran, interrupted = stopped.outcomes, stopped
        check_store_untouched(store, before, ran, to_run)
        for content_hash, outcome in sorted(ran.items()):
            _store_outcome(store, to_run[content_hash], outcome, environment)
        outcomes.update(ran)
        if interrupted is not None:
            raise interrupted
    return outcomes


def wave(request: ExecutionRequest, to_run: dict[str, ExecutionRequest]) -> int:
    """When ``request`` runs: after the training whose model it loads, when that runs too (1); cross-sweep
    checks and frameworks' comparisons after the results they read (+2). A job waits for the artifacts it depends on, whatever its kind."""
    return (1 if training_of(request) in to_run else 0) + (2 if request.directive in (SWEEP_CHECK, FRAMEWORKS_CHECK)
                                                           else 0)


def _store_outcome(store: ArtifactStore, request: ExecutionRequest, outcome: Outcome,
                   environment: EnvironmentCheck) -> None:
    """Store an artifact or a failure record (only failures need the environment's fingerprint, which
    takes a scan of the installed packages)."""
    report_notes(request, outcome)
    result = outcome.result
    if isinstance(result, Success):
        _store_files(store, request, outcome)
        try:
            artifact = build_artifact(request, result, execution_facts(outcome))
            write_or_hold(store, request, "artifact", artifact, lambda: store.write_artifact(artifact))
            return
        except (ValueError, KeyError, TypeError) as exc:  # an invalid result fails the figure, not the build
            result = Failure(FailureKind.bad_result, f"the result cannot be stored: {exc}")
    record = failure_record(result, environment.fingerprint)
    write_or_hold(store, request, "failure", {"contentHash": request.content_hash, **record},
                  lambda: store.write_failure(request.content_hash, record))


def _store_files(store: ArtifactStore, request: ExecutionRequest, outcome: Outcome) -> None:
    """Move the files the worker returned into the store, before the artifact that names them."""
    try:
        for name, content in sorted(outcome.files.items()):
            store_returned_file(store, name, content)
    except OSError as exc:  # the page needs only the artifact: say so, and go on
        warn(f"{request.directive}: cannot write the files it returned into {store.location} ({exc}); the figure "
             "is drawn, but later figures cannot load them until it runs again", Subtype.store,
             location=(request.docname, request.lineno))


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
