"""A lesson's 2-D result as heatmap data: finite values, labels, unit and scale (in the worker).

The size limit is checked before the values are copied into lists, so a 2000 x 2000 result is
refused at the cost of its shape, not of 4 million floats.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.words import plural
from ...execute.worker.loader import BadResult
from ...execute.worker.results import dtype_name, is_complex, to_numpy


def _labels(spec: Any, count: int, index: str, what: str) -> list[str]:
    """Row/column labels: a list, or a pattern like ``token {i}``."""
    if isinstance(spec, list):
        if len(spec) != count:
            raise BadResult(f"{plural(len(spec), f'{what} label')} given for {plural(count, what)}")
        return [str(s) for s in spec]
    pattern = spec if isinstance(spec, str) and spec else f"{what} {{{index}}}"
    try:
        return [pattern.format(**{index: n, "i": n, "j": n, "n": n}) for n in range(count)]
    except (KeyError, IndexError, ValueError) as exc:
        raise BadResult(f"bad {what} label pattern {pattern!r}: {exc}") from None


def heatmap_data(value: Any, options: dict[str, Any],
                 check_shape: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """``data`` for a heatmap: a 2-D finite array plus labels, unit and scale.

    ``check_shape(rows, columns)`` may refuse a size before the values are copied into lists.
    """
    rows_spec, cols_spec = options.get("rows"), options.get("columns")
    if isinstance(value, dict):
        if "values" not in value:
            raise BadResult("a dict result needs a 'values' key (and may give 'rows' and 'columns')")
        rows_spec = value.get("rows", rows_spec)
        cols_spec = value.get("columns", cols_spec)
        value = value["values"]
    dtype = dtype_name(value)
    complex_value = is_complex(value)
    array = to_numpy(value)
    if array.ndim != 2:
        raise BadResult(f"a heatmap needs a 2-D array, got shape {tuple(array.shape)}")
    if array.size == 0:
        raise BadResult("the array is empty")
    if check_shape is not None:
        check_shape(*array.shape)
    if not np.isfinite(array).all():
        bad = int((~np.isfinite(array)).sum())
        raise BadResult(f"{plural(bad, 'value')} of {array.size} {'is' if bad == 1 else 'are'} NaN or infinite")
    n_rows, n_cols = array.shape
    return {
        "kind": "heatmap",
        "values": [[float(v) for v in row] for row in array.astype(np.float64)],
        "rows": _labels(rows_spec, n_rows, "i", "row"),
        "columns": _labels(cols_spec, n_cols, "j", "column"),
        "unit": str(options.get("unit", "")),
        "diverging": bool(options.get("diverging", False)),
        "dtype": dtype,
        **({"complexPart": "real"} if complex_value else {}),
    }
