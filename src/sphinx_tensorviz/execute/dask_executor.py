"""Run jobs on a Dask cluster: ``tensorviz_executor = "dask-local"`` or a scheduler address.

Each job becomes one Dask task that runs the very same worker process as a local
build (:func:`~.runner.run_jobs` on the Dask worker: process isolation, timeout,
limits and sandbox unchanged). The task gets a portable job (see :mod:`.portable`):
the lesson files travel with it, so the Dask worker needs the package and the
frameworks but not the course. The task returns the worker's result; only the
build writes the store, so no task ever holds store credentials.

A Dask worker that dies mid-job (killed, out of memory, machine lost) makes the
scheduler give up on the task (``KilledWorker``; a ``dask-local`` cluster is started
with ``allowed-failures = 0`` and ``worker-saturation = 1.0``, so a task queued behind
the lost one is not blamed); the build then submits it once more, and records a
``crash`` failure with that reason if it is lost again; the folder it ran in is removed by the
next task on that machine, or when a ``dask-local`` cluster stops (:mod:`.task_folders`). Jobs whose device is ``gpu``
ask for a ``GPU`` resource, so only workers started with ``--resources GPU=1``
take them.

``distributed`` is an optional extra (``sphinx-tensorviz[dask]``), imported only here.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from sphinx.util import logging

from ..core.protocol import Job
from ..core.words import plural
from ..warnings_ import Subtype, warn
from .executors import LOCAL_CLUSTER
from .portable import PortableJobError, materialise, portable_job
from .runner import Outcome, RunSettings, crashed, run_jobs
from .task_folders import remove_abandoned, task_folder

#: one job at a time per Dask worker process: run_jobs adopts orphans process-wide
_ONE_AT_A_TIME = threading.Lock()
#: how often a job lost with its Dask worker is submitted again
RETRIES = 1
#: seconds to wait for the scheduler at a tcp:// address
CONNECT_TIMEOUT = 30

Progress = Callable[[Iterable[Outcome], int], Iterator[Outcome]]


class ClusterLost(OSError):
    """The scheduler went away (or cancelled the jobs): nothing is recorded for the jobs still open."""

logger = logging.getLogger("sphinx_tensorviz")


def executor_for(conf: Any) -> Callable[..., dict[str, Outcome]]:
    """``run_jobs`` for the local executor, else a runner with its signature that uses Dask."""
    if conf.executor == "local":
        return run_jobs

    def on_dask(jobs: dict[str, Job], settings: RunSettings,
                progress: Progress | None = None) -> dict[str, Outcome]:
        return run_on_dask(jobs, settings, conf.executor, progress, python_given=conf.python != sys.executable)

    return on_dask


def run_portable(key: str, job: Job, settings: RunSettings) -> Outcome:
    """The Dask task: materialise the job's files in a private folder and run it like a local job."""
    if not settings.python:  # no tensorviz_python given: the Dask worker's own interpreter
        settings = replace(settings, python=sys.executable)
    with task_folder() as folder, _ONE_AT_A_TIME:
        try:
            local = materialise(job, folder / "src")
        except (PortableJobError, OSError) as exc:
            return crashed(key, f"the job cannot be set up: {exc}")
        return run_jobs({key: local}, replace(settings, workers=1))[key]


def run_on_dask(jobs: dict[str, Job], settings: RunSettings, address: str,
                progress: Progress | None = None, python_given: bool = False) -> dict[str, Outcome]:
    """Run every job as a Dask task and return the outcomes by key (as :func:`~.runner.run_jobs`)."""
    outcomes: dict[str, Outcome] = {}
    carried: dict[str, Job] = {}
    for key, job in sorted(jobs.items()):
        try:
            carried[key] = portable_job(job)
        except PortableJobError as exc:
            outcomes[key] = crashed(key, f"not submitted: {exc}")
    if not carried:
        return outcomes
    remote = replace(settings, python=settings.python if python_given else "")
    try:
        with _client(address, settings) as client:
            finished = _submit_all(client, carried, remote)
            for outcome in progress(finished, len(carried)) if progress else finished:
                outcomes[outcome.key] = outcome
    except (OSError, TimeoutError, RuntimeError) as exc:  # no scheduler, a cluster that did not start or was lost
        warn(f"tensorviz_executor = {address!r}: cannot use the Dask cluster ({exc}); "
             f"{len(carried) - len(outcomes)} figure(s) were not executed and run again on the next build",
             Subtype.config)
    return outcomes


def _submit_all(client: Any, jobs: dict[str, Job], settings: RunSettings) -> Iterator[Outcome]:
    """Submit every job, yield outcomes as they finish, and resubmit a job whose worker was lost."""
    from distributed import as_completed

    gpus = _gpu_workers(client)
    run = secrets.token_hex(4)
    pending = as_completed()
    owner: dict[Any, tuple[str, int]] = {}

    def submit(key: str, attempt: int) -> None:
        resources = {"GPU": 1} if jobs[key].device == "gpu" else None
        future = client.submit(run_portable, key, jobs[key], settings, key=f"tensorviz-{key[:16]}-{run}-{attempt}",
                               resources=resources, pure=False, retries=0)
        owner[future] = (key, attempt)
        pending.add(future)

    waiting = [key for key in jobs if jobs[key].device == "gpu" and not gpus]
    if waiting:  # not the code's fault: nothing recorded, they run once a GPU worker joins
        warn(f"tensorviz_device = 'gpu' but no Dask worker offers a GPU resource; {len(waiting)} figure(s) were "
             "not executed. Start GPU workers with 'dask worker ADDRESS --resources GPU=1'", Subtype.config)
    for key in jobs:
        if key not in waiting:
            submit(key, 0)
    for future in pending:
        key, attempt = owner.pop(future)
        outcome = _outcome(key, future, attempt)
        if outcome is None:  # the worker was lost: once more
            logger.info("tensorviz: the Dask worker running %s was lost; trying it once more", jobs[key].shown)
            submit(key, attempt + 1)
            continue
        yield outcome


def _outcome(key: str, future: Any, attempt: int) -> Outcome | None:
    """The job's outcome, or ``None`` when its worker was lost and it may be tried again."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    try:
        return future.result()
    except CancelledError as exc:  # the scheduler was lost or restarted: not the figure's fault
        raise ClusterLost(f"the scheduler cancelled the jobs ({type(exc).__name__}: {exc})") from exc
    except KilledWorker as exc:
        if attempt < RETRIES:
            return None
        return crashed(key, f"the Dask worker running it was lost {plural(attempt + 1, 'time')} ({exc}); it was killed or ran "
                            "out of memory, or its machine went away. Check the Dask workers' logs, then build again")
    except Exception as exc:  # noqa: BLE001 - any error of the task's machinery fails this figure only
        return crashed(key, f"the Dask task failed: {type(exc).__name__}: {exc}")
    finally:
        future.release()


def _gpu_workers(client: Any) -> list[str]:
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return [address for address, info in workers.items() if info.get("resources", {}).get("GPU", 0) >= 1]


@contextmanager
def _client(address: str, settings: RunSettings) -> Iterator[Any]:
    """A client of the scheduler at ``address``, or of a LocalCluster started (and stopped) here."""
    import dask
    from distributed import Client, LocalCluster

    if address != LOCAL_CLUSTER:
        with Client(address, timeout=CONNECT_TIMEOUT) as client:
            yield client
        return
    resources = {"GPU": 1} if settings.device == "gpu" else None
    # a lost worker fails its task at once (the build retries it), and no task waits on a busy worker,
    # where it would die with the worker although it never started
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                              "distributed.scheduler.worker-saturation": 1.0}), \
                LocalCluster(n_workers=max(1, settings.workers), threads_per_worker=1, processes=True,
                             dashboard_address=None, memory_limit=0, resources=resources) as cluster, \
                Client(cluster) as client:
            yield client
    finally:  # its workers ran here: what a killed one left goes with the cluster
        remove_abandoned(Path(tempfile.gettempdir()))
