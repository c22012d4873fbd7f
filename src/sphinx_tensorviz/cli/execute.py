"""``tensorviz execute``: run every missing artifact, as a build in ``auto`` mode would, without writing pages."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import settings
from ..core.words import plural
from ..execute.phase import execute_all
from .project import add_project_arguments, open_project, print_read_warnings


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "execute", help="execute every directive whose artifact is missing (no pages are written)",
        description="Read the project and execute, in worker processes, every directive without a stored "
                    "artifact, exactly as 'sphinx-build' does in tensorviz_execution_mode = 'auto'. "
                    "A recorded failure is retried only when the Python environment changed since it was "
                    "recorded (or the timeout grew); --retry-failed retries every failure now.",
    )
    add_project_arguments(parser)
    parser.add_argument("-j", "--jobs", type=_positive, metavar="N",
                        help="worker processes in parallel (default: tensorviz_workers)")
    parser.add_argument("--force", action="store_true",
                        help="re-execute every directive, cached or not (tensorviz_execution_mode = 'force')")
    parser.add_argument("--retry-failed", action="store_true",
                        help="execute again every directive whose failure is recorded, even if neither its code "
                             "nor the environment changed (e.g. after fixing a broken GPU driver)")
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    overrides = {"tensorviz_workers": args.jobs} if args.jobs else {}
    with open_project(args, overrides) as project:
        requests = project.read()
        print_read_warnings(project)
        store = project.store
        before = {r.content_hash for r in requests if store.has_artifact(r.content_hash)}
        if args.retry_failed:
            for content_hash in {r.content_hash for r in requests} & set(store.failure_hashes()):
                store.delete_failure(content_hash)
        project.app.config.tensorviz_execution_mode = "force" if args.force else "auto"
        project.status.open = True  # Sphinx's progress bar and the tensorviz summary line
        execute_all(project.app.env, settings(project.app), project.app.verbosity)
        project.status.open = False
        failed: dict[str, tuple[str, dict[str, Any]]] = {}
        executed = set()
        for request in requests:
            if store.has_artifact(request.content_hash):
                if args.force or request.content_hash not in before:
                    executed.add(request.content_hash)
                continue
            failure = store.read_failure(request.content_hash) or {"message": "no artifact was stored"}
            failed.setdefault(request.content_hash, (project.location(request), failure))
    unique = len({r.content_hash for r in requests})
    print(f"{len(executed)} executed, {unique - len(executed) - len(failed)} already cached, "
          f"{len(failed)} failed ({plural(len(requests), 'directive')}, {plural(unique, 'distinct computation')})")
    for content_hash, (location, failure) in sorted(failed.items(), key=lambda kv: kv[1][0]):
        print(f"failed: {location} [{content_hash[:12]}] {failure.get('subtype', 'execution')}: "
              f"{failure.get('message', '')}  (tensorviz show {content_hash[:12]})")
    return 1 if failed else 0
