"""Per-document bookkeeping of execution requests and lesson metadata, safe for ``sphinx-build -j``.

Requests live on the environment as ``env.tensorviz_requests`` (docname -> list);
the collector purges a document's entries when it is re-read and merges the
entries of parallel read workers.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector

from ..execute.request import ExecutionRequest

ATTR = "tensorviz_requests"
LESSONS = "tensorviz_lessons"
CATALOGUES = "tensorviz_catalogues"


def _table(env: BuildEnvironment, attr: str) -> dict[str, Any]:
    if not hasattr(env, attr):
        setattr(env, attr, {})
    return getattr(env, attr)


def requests_of(env: BuildEnvironment) -> dict[str, list[ExecutionRequest]]:
    return _table(env, ATTR)


def lessons_of(env: BuildEnvironment) -> dict[str, dict[str, Any]]:
    """docname -> the metadata of its ``tv-lesson``."""
    return _table(env, LESSONS)


def trusted_of(env: BuildEnvironment) -> dict[str, list[int]]:
    """Artifacts already validated, by hash: (mtime_ns, size) of the file that passed.

    A cache kept by the main process only (the store is read after parallel reading is
    merged), so it is neither purged per document nor merged across ``-j`` workers.
    """
    return _table(env, "tensorviz_trusted")


def failing_claims_of(env: BuildEnvironment) -> set[str]:
    """Documents whose stored artifacts hold a failed claim (re-read, so they warn every build)."""
    if not hasattr(env, "tensorviz_failing_claims"):
        env.tensorviz_failing_claims = set()
    return env.tensorviz_failing_claims


def catalogues_of(env: BuildEnvironment) -> dict[str, bool]:
    """docnames that show a ``tv-catalogue`` (rewritten whenever a lesson changes)."""
    return _table(env, CATALOGUES)


def add_request(env: BuildEnvironment, request: ExecutionRequest) -> None:
    requests_of(env).setdefault(env.docname, []).append(request)


def all_requests(env: BuildEnvironment) -> list[ExecutionRequest]:
    """Every request of every document, in a deterministic order."""
    table = requests_of(env)
    return [r for docname in sorted(table) for r in table[docname]]


class RequestCollector(EnvironmentCollector):
    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        for attr in (ATTR, LESSONS, CATALOGUES):
            _table(env, attr).pop(docname, None)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        for attr in (ATTR, LESSONS, CATALOGUES):
            mine, theirs = _table(env, attr), _table(other, attr)
            for docname in docnames:
                if docname in theirs:
                    mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: Any) -> None:
        """Pick the lesson's preview figure (``:preview:`` by name, else its first executed figure)."""
        from .nodes import tensorviz_figure

        meta = lessons_of(app.env).get(app.env.docname)
        if meta is None:
            return
        figures = [n for n in doctree.findall(tensorviz_figure) if n["request"] is not None]
        wanted = meta.get("preview")
        chosen = next((n for n in figures if wanted in n["names"]), None) if wanted else None
        if chosen is None and figures:
            chosen = figures[0]
        meta["previewRequest"] = chosen["request"] if chosen is not None else None
