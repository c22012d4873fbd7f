"""Turn what lesson code returns into artifact ``data``, refusing what cannot be drawn.

Runs inside the worker. Raises :class:`BadResult` with a message for the author
when the value has the wrong type, shape, or non-finite entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.words import plural
from .loader import BadResult

__all__ = ["BadResult", "dtype_name", "heatmap_data", "is_complex", "to_numpy"]


def dtype_name(value: Any) -> str:
    """The dtype ``value`` was computed in (``float32``, ``bfloat16``, ``int64``...).

    Stored beside the values (which are kept as float64 JSON numbers), so that ``verify`` can
    compare a re-run within what that dtype can reproduce on another machine.
    """
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError):
            return "float64"
    name = str(dtype).removeprefix("torch.")
    return "float64" if name in ("object", "double") else {"float": "float32", "half": "float16"}.get(name, name)


def to_numpy(value: Any) -> np.ndarray:
    """A float64 array from a NumPy, PyTorch or JAX array (or nested lists); of a complex array,
    its real part (callers that draw it say so: see :func:`is_complex`)."""
    if hasattr(value, "detach"):  # torch.Tensor, without importing torch here
        tensor = value.detach().cpu()
        value = (tensor.float() if str(tensor.dtype) == "torch.bfloat16" else tensor).numpy()  # NumPy has no bfloat16
    if isinstance(value, (str, bytes)) or value is None:
        raise BadResult(f"expected an array, got {type(value).__name__}")
    if is_complex(value):
        value = np.real(np.asarray(value))
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise BadResult(f"expected a numeric array, got {type(value).__name__} ({exc})") from None
    return array


def is_complex(value: Any) -> bool:
    """Whether ``value`` holds complex numbers (a FFT, a rotary embedding in complex form): drawn
    from its real part, which the page must say, as the imaginary part is lost."""
    return dtype_name(value).startswith("complex")


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
