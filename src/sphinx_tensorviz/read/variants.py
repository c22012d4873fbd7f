"""A directive whose invocation another feature may handle: ``tv-graph`` with a ``:diagram:``.

``tv-graph`` traces a model, or draws an authored diagram when given one; the two are different
figure kinds, owned by different features, behind one directive name. The feature that owns the
directive declares the options; a feature that handles some invocations registers a *variant*:
a test of the options and a handler that runs instead of the directive's own ``run``. Variants
live on the Sphinx application (set up once per application, copied into ``-j`` read workers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ..config import app_of

#: does this invocation (its raw options) belong to the variant?
Claims = Callable[[dict[str, Any]], bool]
#: runs the directive instead of its own ``run``
Handler = Callable[[SphinxDirective], list[nodes.Node]]


def add_variant(app: Any, directive: str, claims: Claims, handler: Handler) -> None:
    found = getattr(app, "_tensorviz_variants", None)
    if found is None:
        found = app._tensorviz_variants = {}
    found.setdefault(directive, []).append((claims, handler))


def variant_for(directive: SphinxDirective) -> Handler | None:
    """The handler of the first variant that claims this invocation, if any."""
    for claims, handler in getattr(app_of(directive.env), "_tensorviz_variants", {}).get(directive.name, ()):
        if claims(directive.options):
            return handler
    return None
