"""What a heatmap's data must be beyond its schema, and its size limit.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere) and, for
the limit, by the worker before the values are copied, so an oversized result says what to change.
"""

from __future__ import annotations

import math
from typing import Any


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """Rows have one length, the labels fit the grid, and every value is finite."""
    values = data["values"]
    width = len(values[0])
    if any(len(row) != width for row in values):
        return ["data/values: rows have different lengths"]
    if len(data["rows"]) != len(values) or len(data["columns"]) != width:
        return [f"data: {len(data['rows'])} row and {len(data['columns'])} column labels for "
                f"{len(values)} x {width} values"]
    if not all(math.isfinite(v) for row in values for v in row):
        return ["data/values: NaN or infinite values"]
    return []


def cells_problem(rows: int, columns: int, limit: float) -> str | None:
    """Why a ``rows`` x ``columns`` heatmap is over ``tensorviz_max_heatmap_cells`` (``None``: it is not)."""
    cells = rows * columns
    if cells <= limit:
        return None
    return (f"a {rows} x {columns} heatmap has {cells:,} cells, over tensorviz_max_heatmap_cells = "
            f"{int(limit):,}; downsample or slice the array in the lesson code (e.g. `values[::4, ::4]` or a block "
            "mean), or raise the limit in conf.py")


def data_cells_problem(data: dict[str, Any], limit: float) -> str | None:
    """:func:`cells_problem` of stored data (malformed data is the schema's to report)."""
    values = data.get("values")
    if not isinstance(values, list) or not values or not isinstance(values[0], list):
        return None
    return cells_problem(len(values), len(values[0]), limit)
