"""A figure computed in several frameworks (``:frameworks:``) drawn: its comparison said, its figure shown.

The comparison job's artifact (:mod:`..execute.worker.frameworks_check`) says, per array, whether the
frameworks agree and within what tolerance. Every disagreement is a located ``tensorviz.frameworks``
warning on every build (so ``-W`` fails while it lasts), naming the array, the largest difference and
its index; the footer says which frameworks agreed and within what tolerance. The figure itself is the
first framework's (they agree, so it is the same figure), or, with ``:show: both``, each framework's in
its tab (the page around it is made when the page is read: :mod:`..read.framework_tabs`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docutils import nodes

from ..core.frameworks import Frameworks
from ..core.i18n import _
from ..core.nodes import tensorviz_figure
from ..core.request import ExecutionRequest
from ..warnings_ import Subtype, warn
from .footer import FRAMEWORK_NAMES
from .page import Page

#: (page, figure node) -> the drawn figure; (page, node, request, problem) -> why it has no artifact
Draw = Callable[[Page, tensorviz_figure], nodes.Node]
Missing = Callable[[Page, tensorviz_figure, ExecutionRequest, Any], nodes.Node]

def framework_figure(page: Page, node: tensorviz_figure, frameworks: Frameworks, draw: Draw,
                     missing: Missing) -> nodes.Node:
    """The figure of the node's framework (the first's, unless ``:show: both`` put one in each framework's
    tab), its footer saying what was compared."""
    found = page.store.read_artifact(frameworks.check.content_hash)
    if isinstance(found, dict):
        note = agreement(found["data"], node, frameworks.first.directive) + provenance(page, frameworks)
    else:  # not compared: each framework without a result says why (the first's figure, drawn below, for it)
        results = {name: page.store.read_artifact(r.content_hash) for name, r in frameworks.requests.items()}
        why = [missing(page, node, frameworks.requests[name], result).astext()
               for name, result in list(results.items())[1:] if not isinstance(result, dict)]
        if all(isinstance(result, dict) for result in results.values()):  # the comparison itself failed
            why = [missing(page, node, frameworks.check, found).astext()]
        note = " · " + _("frameworks not compared: {why}").format(why=" ".join(why)) if why else ""
    name = node.get("framework") or next(iter(frameworks.requests))
    return draw(page, _copy(node, frameworks.requests[name], note))


def _copy(node: tensorviz_figure, request: ExecutionRequest, note: str) -> tensorviz_figure:
    """``node`` as a single-framework figure of ``request``, with the comparison in its footer."""
    copy = node.deepcopy()
    copy["request"], copy["frameworks"], copy["footer_note"] = request, None, note
    return copy


def provenance(page: Page, frameworks: Frameworks) -> str:
    """Which recorded jobs the agreement comes from, as a figure's own footer names its artifact."""
    jobs = [(_("comparison: content hash {hash}"), frameworks.check),
            (_("shared weights: content hash {hash}"), frameworks.weights)]
    return "".join(" · " + words.format(hash=request.content_hash[:12]) for words, request in jobs
                   if request is not None and isinstance(page.store.read_artifact(request.content_hash), dict))


def shown(backend: str) -> str:
    return FRAMEWORK_NAMES.get(backend, backend)


def agreement(data: dict[str, Any], node: tensorviz_figure, directive: str) -> str:
    """The footer's line, after a warning for each array on which a framework disagrees with the first."""
    names = [shown(f["name"]) for f in data["frameworks"]]
    first = names[0]
    arrays = data["arrays"]
    for record in arrays:
        if not record["agree"]:
            warn(f"{directive}: {disagreement(first, shown(record['framework']), record)}", Subtype.frameworks,
                 location=node)
    if not arrays:
        warn(f"{directive}: {' and '.join(names)} record no array in common, so nothing was compared "
             f"({', '.join(data.get('unmatched') or ()) or 'no arrays'})", Subtype.frameworks, location=node)
        return " · " + _("frameworks not compared")
    agreed = sorted({r["name"] for r in arrays if r["agree"]} - {r["name"] for r in arrays if not r["agree"]})
    if len(agreed) < len({r["name"] for r in arrays}):
        return " · " + _("{frameworks} disagree").format(frameworks=_(" and ").join(names))
    tolerances = sorted({(r["dtype"], r["rtol"], r["atol"]) for r in arrays}, key=lambda t: -t[2])
    dtype, rtol, atol = tolerances[0]
    return " · " + _("{frameworks} agree on {arrays} within {dtype} tolerance (|difference| ≤ {atol} + {rtol} × "
                     "|value|)").format(frameworks=_(" and ").join(names), arrays=", ".join(agreed), dtype=dtype,
                                        atol=f"{atol:.2g}", rtol=f"{rtol:.2g}")


def disagreement(first: str, other: str, record: dict[str, Any]) -> str:
    """``JAX disagrees with PyTorch on output: the largest difference is 0.0123 at index [1, 4] ...``."""
    head = f"{other} disagrees with {first} on {record['name']}"
    if record.get("shapes"):
        first_shape, other_shape = (list(s) for s in record["shapes"])
        return f"{head}: its shape is {other_shape} in {other} and {first_shape} in {first}"
    if record["atol"] == 0 and record["rtol"] == 0:  # ids and counts (a lens's top-1 token): no tolerance
        return f"{head}: they differ at index {list(record['index'])} ({record['dtype']}, compared exactly)"
    return (f"{head}: the largest difference is {record['maxDiff']:.3g} at index {list(record['index'])} "
            f"(allowed for {record['dtype']}: {record['atol']:.2g} + {record['rtol']:.2g} × |value|)")
