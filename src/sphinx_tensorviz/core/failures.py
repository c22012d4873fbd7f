"""The kinds of failed execution: one list, used by the worker protocol and the warning subtypes."""

from __future__ import annotations

from enum import Enum


class FailureKind(str, Enum):
    """Why a figure has no artifact; also the ``tensorviz.<kind>`` warning it gives."""

    execution = "execution"  #: lesson code raised an exception
    bad_result = "bad_result"  #: the result has the wrong type, shape, or non-finite values
    limit = "limit"  #: the result or its printed output is over a ``tensorviz_max_*`` limit
    timeout = "timeout"  #: lesson code ran past ``tensorviz_timeout``
    crash = "crash"  #: the worker process died (killed, out of memory, os._exit) or could not start
