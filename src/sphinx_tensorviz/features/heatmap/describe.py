"""Words for a heatmap: the short alt text and the visible long description.

Generated from the data when the author gives no ``:alt:``, so no figure ships
without a text alternative. The "notable pattern" sentence is what a sighted
reader would notice first: identical rows or columns, all zeros, or where the
largest value sits.
"""

from __future__ import annotations

from typing import Any

from ...core.i18n import _, counted
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
        return _("Every value is exactly zero.")
    notes = []
    if identical_rows(values):
        notes.append(_("All {row_count} rows are identical (to within float32 rounding), and not zero.").format(
            row_count=len(rows)))
    if identical_columns(values):
        notes.append(_("All {column_count} columns are identical (to within float32 rounding).").format(
            column_count=len(cols)))
    i, j = max(
        ((i, j) for i in range(len(rows)) for j in range(len(cols))), key=lambda ij: abs(values[ij[0]][ij[1]])
    )
    notes.append(_("The largest magnitude is {value}, at {row}, {column}.").format(
        value=fmt(values[i][j]), row=rows[i], column=cols[j]))
    return " ".join(notes)


def heatmap_alt(data: dict[str, Any]) -> str:
    """One or two sentences: what, shape, range, pattern."""
    values, rows, cols = data["values"], data["rows"], data["columns"]
    flat = [v for row in values for v in row]
    what = data.get("unit") or _("values")
    return _("Heatmap of {what}: {rows} ({first_row} to {last_row}) by {columns} ({first_column} to "
             "{last_column}), ranging from {low} to {high}. {pattern}").format(
        what=what, rows=counted(len(rows), "row", "rows"), first_row=rows[0], last_row=rows[-1],
        columns=counted(len(cols), "column", "columns"), first_column=cols[0], last_column=cols[-1],
        low=fmt(min(flat)), high=fmt(max(flat)), pattern=pattern(data))


def heatmap_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the picture; the data table follows it on the page."""
    unit = data.get("unit") or _("value")
    if data.get("diverging"):
        hues = (_("blue below zero and red above") if colormap == "RdBu_r"
                else _("one hue below zero and another above"))
        scale = _("The colour scale ({colormap}) is centred on zero: {hues}; paler cells are closer to zero, "
                  "and the colour bar gives the numbers.").format(colormap=colormap, hues=hues)
    else:
        scale = _("Darker to brighter colours ({colormap}) run from the smallest to the largest value.").format(
            colormap=colormap)
    return _("Each cell shows the {unit} for one row and one column. {scale} {pattern}").format(
        unit=unit, scale=scale, pattern=pattern(data))
