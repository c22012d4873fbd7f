"""Size limits on what one execution may produce, shared by the worker and the build.

A result is stored in a committed JSON file and drawn into a web page, so its size
must be bounded: a 2000 x 2000 array would otherwise become a 100 MB artifact and a
500 MB page. The worker checks the limits first (it can say exactly what to change);
the build checks the result file and every artifact it reads again, because the
worker ran untrusted code and a stored artifact may come from anywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


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
    """The ``tensorviz_max_*`` values, as passed to the worker in its job document."""

    result_mb: float = 8
    stdout_kb: int = 64
    heatmap_cells: int = 16_384
    graph_nodes: int = 20_000

    @property
    def result_bytes(self) -> int:
        return int(self.result_mb * 1024 * 1024)

    @property
    def stdout_chars(self) -> int:
        return int(self.stdout_kb * 1024)

    def to_job(self) -> dict[str, Any]:
        return asdict(self)

    def raised_since(self, recorded: Any) -> bool:
        """Whether any limit in ``recorded`` ({field: value}, from a failure record) is higher now."""
        if not isinstance(recorded, dict):
            return False
        now = asdict(self)
        return any(isinstance(v, (int, float)) and isinstance(now.get(k), (int, float)) and now[k] > v
                   for k, v in recorded.items())

    @classmethod
    def from_settings(cls, conf: Any) -> Limits:
        """The limits of a :class:`~sphinx_tensorviz.config.Settings`."""
        return cls(conf.max_result_mb, conf.max_stdout_kb, conf.max_heatmap_cells, conf.max_graph_nodes)

    @classmethod
    def from_job(cls, given: dict[str, Any]) -> Limits:
        """The limits a job carries (:meth:`to_job`); a missing or malformed value keeps its default."""
        return cls(**{k: given[k] for k in asdict(cls()) if isinstance(given.get(k), (int, float))})


def check_heatmap_cells(rows: int, columns: int, limits: Limits) -> None:
    cells = rows * columns
    if cells > limits.heatmap_cells:
        raise LimitExceeded(
            f"a {rows} x {columns} heatmap has {cells:,} cells, over tensorviz_max_heatmap_cells = "
            f"{limits.heatmap_cells:,}; downsample or slice the array in the lesson code (e.g. "
            "`values[::4, ::4]` or a block mean), or raise the limit in conf.py", "heatmap_cells"
        )


def check_graph_nodes(count: int, limits: Limits) -> None:
    if count > limits.graph_nodes:
        raise LimitExceeded(
            f"the traced graph has {count:,} nodes, over tensorviz_max_graph_nodes = {limits.graph_nodes:,}; "
            "trace a smaller configuration of the model (fewer layers) or one block of it, or raise the limit",
            "graph_nodes",
        )


def check_result_size(size: int, limits: Limits) -> None:
    if size > limits.result_bytes:
        raise LimitExceeded(
            f"the result is {size / 1024 / 1024:.1f} MB as stored JSON, over tensorviz_max_result_mb = "
            f"{limits.result_mb:g}; return less data (downsample in the lesson code, fewer checkpoints), "
            "or raise the limit", "result_mb"
        )


def check_data_size(data: dict[str, Any], limits: Limits) -> None:
    """Raise :class:`LimitExceeded` when artifact ``data`` is over the figure limits."""
    try:
        if data.get("kind") == "heatmap":
            values = data["values"]
            check_heatmap_cells(len(values), len(values[0]) if values else 0, limits)
        elif data.get("kind") == "graph":
            check_graph_nodes(len(data["layers"]), limits)
    except (KeyError, TypeError, IndexError):
        pass  # the schema check reports malformed data


def data_size_problem(data: dict[str, Any], limits: Limits) -> str | None:
    """Why a stored artifact's ``data`` is over the figure limits (``None`` when it is not)."""
    try:
        check_data_size(data, limits)
    except LimitExceeded as exc:
        return str(exc)
    return None
