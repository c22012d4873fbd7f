"""Per-document bookkeeping of execution requests, safe for ``sphinx-build -j``.

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


def requests_of(env: BuildEnvironment) -> dict[str, list[ExecutionRequest]]:
    if not hasattr(env, ATTR):
        setattr(env, ATTR, {})
    return getattr(env, ATTR)


def add_request(env: BuildEnvironment, request: ExecutionRequest) -> None:
    requests_of(env).setdefault(env.docname, []).append(request)


def all_requests(env: BuildEnvironment) -> list[ExecutionRequest]:
    """Every request of every document, in a deterministic order."""
    table = requests_of(env)
    return [r for docname in sorted(table) for r in table[docname]]


class RequestCollector(EnvironmentCollector):
    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        requests_of(env).pop(docname, None)

    def merge_other(
        self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment
    ) -> None:
        mine, theirs = requests_of(env), requests_of(other)
        for docname in docnames:
            if docname in theirs:
                mine[docname] = theirs[docname]

    def process_doc(self, app: Sphinx, doctree: Any) -> None:
        """Nothing to do: directives add their requests while the document is parsed."""
