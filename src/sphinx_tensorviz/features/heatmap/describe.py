"""Words for a heatmap: the short alt text and the visible long description.

Generated from the data when the author gives no ``:alt:``, so no figure ships
without a text alternative. The "notable pattern" sentence is what a sighted
reader would notice first: identical rows or columns, all zeros, or where the
largest value sits.
"""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from ...render.numbers import fmt


def _tolerance(values: list[list[float]]) -> float:
    largest = max(abs(v) for row in values for v in row)
    return 1e-6 + 1e-5 * largest


def identical_rows(values: list[list[float]]) -> bool:
    tol = _tolerance(values)
    return len(values) > 1 and all(
        abs(a - b) <= tol for row in values[1:] for a, b in zip(row, values[0])
    )


def identical_columns(values: list[list[float]]) -> bool:
    tol = _tolerance(values)
    return len(values[0]) > 1 and all(abs(v - row[0]) <= tol for row in values for v in row)


def pattern(data: dict[str, Any]) -> str:
    values, rows, cols = data["values"], data["rows"], data["columns"]
    largest = max(abs(v) for row in values for v in row)
    if largest == 0:
        return "Every value is exactly zero."
    notes = []
    if identical_rows(values):
        notes.append(f"All {len(rows)} rows are identical (to within float32 rounding), and not zero.")
    if identical_columns(values):
        notes.append(f"All {len(cols)} columns are identical (to within float32 rounding).")
    i, j = max(
        ((i, j) for i in range(len(rows)) for j in range(len(cols))), key=lambda ij: abs(values[ij[0]][ij[1]])
    )
    notes.append(f"The largest magnitude is {fmt(values[i][j])}, at {rows[i]}, {cols[j]}.")
    return " ".join(notes)


def heatmap_alt(data: dict[str, Any]) -> str:
    """One or two sentences: what, shape, range, pattern."""
    values, rows, cols = data["values"], data["rows"], data["columns"]
    flat = [v for row in values for v in row]
    what = data.get("unit") or "values"
    return (
        f"Heatmap of {what}: {plural(len(rows), 'row')} ({rows[0]} to {rows[-1]}) by {plural(len(cols), 'column')} "
        f"({cols[0]} to {cols[-1]}), ranging from {fmt(min(flat))} to {fmt(max(flat))}. {pattern(data)}"
    )


def heatmap_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the picture; the data table follows it on the page."""
    unit = data.get("unit") or "value"
    if data.get("diverging"):
        hues = "blue below zero and red above" if colormap == "RdBu_r" else "one hue below zero and another above"
        scale = (
            f"The colour scale ({colormap}) is centred on zero: {hues}; paler cells are closer to zero, "
            "and the colour bar gives the numbers."
        )
    else:
        scale = f"Darker to brighter colours ({colormap}) run from the smallest to the largest value."
    return f"Each cell shows the {unit} for one row and one column. {scale} {pattern(data)}"
