"""Per-document tables kept on the Sphinx environment, shared by every stage.

The reader fills them (requests, lesson metadata, catalogues), the execution phase and the
renderer read them; :class:`~sphinx_tensorviz.read.collector.RequestCollector` purges and
merges them for ``sphinx-build -j``. They live here, not in ``read/``, because every stage
needs them and no stage may import another backwards.
"""

from __future__ import annotations

from typing import Any

from sphinx.environment import BuildEnvironment

from .request import ExecutionRequest

ATTR = "tensorviz_requests"
LESSONS = "tensorviz_lessons"
CATALOGUES = "tensorviz_catalogues"


def table(env: BuildEnvironment, attr: str) -> dict[str, Any]:
    if not hasattr(env, attr):
        setattr(env, attr, {})
    return getattr(env, attr)


def requests_of(env: BuildEnvironment) -> dict[str, list[ExecutionRequest]]:
    return table(env, ATTR)


def lessons_of(env: BuildEnvironment) -> dict[str, dict[str, Any]]:
    """docname -> the metadata of its ``tv-lesson``."""
    return table(env, LESSONS)


def trusted_of(env: BuildEnvironment) -> dict[str, list[int]]:
    """Artifacts already validated, by hash: (mtime_ns, size) of the file that passed.

    A cache kept by the main process only (the store is read after parallel reading is
    merged), so it is neither purged per document nor merged across ``-j`` workers.
    """
    return table(env, "tensorviz_trusted")


def failing_claims_of(env: BuildEnvironment) -> set[str]:
    """Documents whose stored artifacts hold a failed claim (re-read, so they warn every build)."""
    if not hasattr(env, "tensorviz_failing_claims"):
        env.tensorviz_failing_claims = set()
    return env.tensorviz_failing_claims


def catalogues_of(env: BuildEnvironment) -> dict[str, bool]:
    """docnames that show a ``tv-catalogue`` (rewritten whenever a lesson changes)."""
    return table(env, CATALOGUES)


def add_request(env: BuildEnvironment, request: ExecutionRequest) -> None:
    requests_of(env).setdefault(env.docname, []).append(request)


def all_requests(env: BuildEnvironment) -> list[ExecutionRequest]:
    """Every request of every document, in a deterministic order."""
    table = requests_of(env)
    return [r for docname in sorted(table) for r in table[docname]]
