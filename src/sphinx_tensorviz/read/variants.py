"""A directive whose invocation another feature may handle: ``tv-graph`` with a ``:diagram:``.

``tv-graph`` traces a model, or draws an authored diagram when given one; the two are different
figure kinds, owned by different features, behind one directive name. The feature that owns the
directive declares the options; a feature that handles some invocations registers a *variant*:
a test of the options and a handler that runs instead of the directive's own ``run``. Variants
are kept per Sphinx application (set up once per application, copied into ``-j`` read workers
with the rest of the process), in a :class:`~..core.per_app.PerApp` slot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ..config import app_of
from ..core.per_app import PerApp

#: does this invocation (its raw options) belong to the variant?
Claims = Callable[[dict[str, Any]], bool]
#: runs the directive instead of its own ``run``
Handler = Callable[[SphinxDirective], list[nodes.Node]]


#: directive name -> its variants, in the order registered
_VARIANTS: PerApp[dict[str, list[tuple[Claims, Handler]]]] = PerApp(dict)


def add_variant(app: Any, directive: str, claims: Claims, handler: Handler) -> None:
    _VARIANTS.of(app).setdefault(directive, []).append((claims, handler))


def variant_for(directive: SphinxDirective) -> Handler | None:
    """The handler of the first variant that claims this invocation, if any."""
    for claims, handler in (_VARIANTS.get(app_of(directive.env)) or {}).get(directive.name, ()):
        if claims(directive.options):
            return handler
    return None
