"""One place for tensorviz warnings, so authors can filter them with ``suppress_warnings``.

Every warning is ``type="tensorviz"`` with a subtype from :class:`Subtype`; the
reference page lists them, and a test checks that the list and the docs agree.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from sphinx.util import logging

from .core.failures import FailureKind

logger = logging.getLogger("sphinx_tensorviz")


class Subtype(str, Enum):
    """Warning subtypes, e.g. ``suppress_warnings = ["tensorviz.cache_miss"]``."""

    option = "option"  #: a directive option or body is invalid
    source = "source"  #: a source file is missing or outside the project
    # the kinds of failed execution (core.failures.FailureKind), each its own subtype
    execution = FailureKind.execution.value  #: lesson code raised an exception
    timeout = FailureKind.timeout.value  #: lesson code ran past ``tensorviz_timeout``
    crash = FailureKind.crash.value  #: the worker process died (killed, out of memory, os._exit)
    bad_result = FailureKind.bad_result.value  #: the result has the wrong type, shape, or non-finite values
    cache_miss = "cache_miss"  #: ``cache-only`` mode and no stored artifact
    store = "store"  #: a stored artifact is corrupt, invalid, misnamed, unwritable, or written by lesson code
    claim = "claim"  #: a verified numerical claim failed
    target = "target"  #: a step names a graph node that does not exist
    config = "config"  #: a ``tensorviz_*`` configuration value is invalid
    limit = FailureKind.limit.value  #: a result, its printed output, a heatmap or a graph is over a ``tensorviz_max_*`` limit
    output = "output"  #: a file beside the pages (a download, a graph's module file) cannot be written
    layout = "layout"  #: an activation's layout (tokens, channels, heads) cannot be inferred
    frameworks = "frameworks"  #: the frameworks of a figure with ``:frameworks:`` disagree on a recorded array


def failure_subtype(kind: str) -> Subtype:
    """The warning subtype of a recorded failure's kind (a record from elsewhere may name one we do
    not know: it is shown as a crash)."""
    try:
        return Subtype(FailureKind(kind).value)
    except ValueError:
        return Subtype.crash


#: how many warnings :func:`warn` has given in this process (one number, read by :func:`given`)
_GIVEN = [0]


def given() -> int:
    """How many tensorviz warnings this process has given: a figure kept as HTML must not be one
    whose drawing warned (the warning would not be given again when it is used)."""
    return _GIVEN[0]


def warn(message: str, subtype: Subtype, location: Any = None) -> None:
    """Emit a located tensorviz warning (the build goes on; ``-W`` makes it fail)."""
    _GIVEN[0] += 1
    logger.warning(
        message, type="tensorviz", subtype=subtype.value, location=location
    )
