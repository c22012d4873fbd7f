"""Size limits on what one execution may produce, shared by the worker and the build.

A result is stored in a committed JSON file and drawn into a web page, so its size
must be bounded: a 2000 x 2000 array would otherwise become a 100 MB artifact and a
500 MB page. The worker checks the limits first (it can say exactly what to change);
the build checks the result file and every artifact it reads again, because the
worker ran untrusted code and a stored artifact may come from anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .kinds import kind_named, resolve


class LimitExceeded(ValueError):
    """A result over one of the ``tensorviz_max_*`` limits; recorded as a ``limit`` failure.

    ``name`` is the :class:`Limits` field it exceeded, recorded so that raising that limit
    runs the code again. Kept free of NumPy (unlike :class:`.results.BadResult`) so the
    build can check stored artifacts without importing it.
    """

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


@dataclass(frozen=True)
class Limits:
    """The ``tensorviz_max_*`` values, as passed to the worker in its job document.

    ``figures`` holds the figure kinds' own limits (:class:`~.kinds.SizeLimit`), by field name: a
    heatmap's cells, a graph's nodes. They travel in the job and in failure records beside the two
    every execution has, under the same flat names as always (``heatmap_cells``).
    """

    result_mb: float = 8
    stdout_kb: int = 64
    figures: Mapping[str, float] = field(default_factory=dict)

    @property
    def result_bytes(self) -> int:
        return int(self.result_mb * 1024 * 1024)

    @property
    def stdout_chars(self) -> int:
        return int(self.stdout_kb * 1024)

    def to_job(self) -> dict[str, Any]:
        return {"result_mb": self.result_mb, "stdout_kb": self.stdout_kb, **self.figures}

    def raised_since(self, recorded: Any) -> bool:
        """Whether any limit in ``recorded`` ({field: value}, from a failure record) is higher now."""
        if not isinstance(recorded, dict):
            return False
        now = self.to_job()
        return any(isinstance(v, (int, float)) and isinstance(now.get(k), (int, float)) and now[k] > v
                   for k, v in recorded.items())

    @classmethod
    def from_settings(cls, conf: Any) -> Limits:
        """The limits of a :class:`~sphinx_tensorviz.config.Settings`."""
        return cls(conf.max_result_mb, conf.max_stdout_kb, dict(conf.figure_limits))

    @classmethod
    def from_job(cls, given: dict[str, Any]) -> Limits:
        """The limits a job carries (:meth:`to_job`); a missing or malformed value keeps its default."""
        numbers = {k: v for k, v in given.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        return cls(numbers.pop("result_mb", cls.result_mb), int(numbers.pop("stdout_kb", cls.stdout_kb)), numbers)


def check_result_size(size: int, limits: Limits) -> None:
    if size > limits.result_bytes:
        raise LimitExceeded(
            f"the result is {size / 1024 / 1024:.1f} MB as stored JSON, over tensorviz_max_result_mb = "
            f"{limits.result_mb:g}; return less data (downsample in the lesson code, fewer checkpoints), "
            "or raise the limit", "result_mb"
        )


def data_size_problem(data: dict[str, Any], limits: Limits) -> str | None:
    """Why a stored artifact's ``data`` is over a limit of its kind (``None`` when it is not)."""
    found = _over_limit(data, limits)
    return found[0] if found else None


def _over_limit(data: dict[str, Any], limits: Limits) -> tuple[str, str] | None:
    """(message, limit field) when ``data`` is over a limit of its kind (``None`` when it is not, or when
    no kind of its name is declared: the schema check reports that)."""
    kind = kind_named(data.get("kind"))
    for limit in kind.limits if kind is not None else ():
        try:
            problem = resolve(limit.check)(data, limits.figures.get(limit.field, limit.default))
        except (KeyError, TypeError, IndexError):
            continue  # the schema check reports malformed data
        if problem:
            return problem, limit.field
    return None


def check_data_size(data: dict[str, Any], limits: Limits) -> None:
    """Raise :class:`LimitExceeded` when artifact ``data`` is over its kind's limits."""
    found = _over_limit(data, limits)
    if found:
        raise LimitExceeded(*found)
