"""Words for a swept heatmap: how the figure changes across the sweep.

The per-point alt texts say what each picture shows; this says what a reader comparing them
would notice: how the largest value, the spread and (for rows that are probability
distributions, like attention weights) the mean row entropy move from the first value to the
last.
"""

from __future__ import annotations

import math
from typing import Any

from docutils import nodes

from ...core.words import plural
from ...render.numbers import fmt
from ...render.tables import data_table

#: rows whose entries are >= 0 and sum to 1 within this are read as probability distributions
_SUM_TOLERANCE = 1e-3


def is_distribution(values: list[list[float]]) -> bool:
    """Every row is non-negative and sums to one (softmax output, attention weights)."""
    return all(min(row) >= 0 and abs(sum(row) - 1) <= _SUM_TOLERANCE for row in values)


def mean_row_entropy(values: list[list[float]]) -> float:
    """Mean Shannon entropy of the rows, in nats: 0 for one-hot rows, log(n) for uniform ones."""
    return sum(-sum(p * math.log(p) for p in row if p > 0) for row in values) / len(values)


def point_stats(data: dict[str, Any]) -> dict[str, float]:
    """The numbers the summary table and the trend sentence use."""
    flat = [v for row in data["values"] for v in row]
    stats = {"min": min(flat), "max": max(flat)}
    if is_distribution(data["values"]):
        stats["entropy"] = mean_row_entropy(data["values"])
    return stats


def _trend(name: str, first: float, last: float, series: list[float]) -> str:
    if math.isclose(first, last, rel_tol=1e-3, abs_tol=1e-9):
        return f"the {name} stays at about {fmt(first, 3)}"
    rising = last > first
    steps = list(zip(series, series[1:]))
    steady = all((b >= a) if rising else (b <= a) for a, b in steps)
    verb = ("rises" if rising else "falls") + (" steadily" if steady and len(series) > 2 else "")
    return f"the {name} {verb} from {fmt(first, 3)} to {fmt(last, 3)}"


def sweep_alt(labels: list[str], parameters: dict[str, list[Any]], datas: list[dict[str, Any]],
              limits: tuple[float, float]) -> str:
    """The sweep's text alternative: what is swept, the shared scale, and what changes."""
    first = datas[0]
    unit = first.get("unit") or "values"
    names = " and ".join(parameters)
    shapes = [f"{plural(len(d['rows']), 'row')} by {plural(len(d['columns']), 'column')}" for d in datas]
    shape = shapes[0] if len(set(shapes)) == 1 else f"from {shapes[0]} to {shapes[-1]}"
    head = (f"{plural(len(datas), 'heatmap')} of {unit} ({shape}), one for each value of {names} "
            f"({'; '.join(labels)}), on one shared colour scale from {fmt(limits[0])} to {fmt(limits[1])}.")
    stats = [point_stats(d) for d in datas]
    trends = [_trend("largest value", stats[0]["max"], stats[-1]["max"], [s["max"] for s in stats])]
    if all("entropy" in s for s in stats):
        series = [s["entropy"] for s in stats]
        trends.append(_trend("mean row entropy (nats)", series[0], series[-1], series))
    return f"{head} From {labels[0]} to {labels[-1]}, {' and '.join(trends)}."


def sweep_table(labels: list[str], datas: list[dict[str, Any]]) -> nodes.table:
    """One row per point: smallest and largest value, and mean row entropy where rows are distributions."""
    stats = [point_stats(d) for d in datas]
    columns = ["smallest", "largest"] + (["mean row entropy (nats)"] if all("entropy" in s for s in stats) else [])
    keys = ["min", "max", "entropy"][: len(columns)]
    cells = [[fmt(s[k]) for k in keys] for s in stats]
    return data_table("Across the sweep", "point", labels, columns, cells)
