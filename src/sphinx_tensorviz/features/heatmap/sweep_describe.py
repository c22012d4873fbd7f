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

from ...core.i18n import _, counted
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
        return _("the {name} stays at about {value}").format(name=name, value=fmt(first, 3))
    rising = last > first
    steps = list(zip(series, series[1:]))
    steady = all((b >= a) if rising else (b <= a) for a, b in steps) and len(series) > 2
    sentence = ((_("the {name} rises steadily from {first} to {last}") if steady
                 else _("the {name} rises from {first} to {last}")) if rising else
                (_("the {name} falls steadily from {first} to {last}") if steady
                 else _("the {name} falls from {first} to {last}")))
    return sentence.format(name=name, first=fmt(first, 3), last=fmt(last, 3))


def sweep_alt(labels: list[str], parameters: dict[str, list[Any]], datas: list[dict[str, Any]],
              limits: tuple[float, float]) -> str:
    """The sweep's text alternative: what is swept, the shared scale, and what changes."""
    first = datas[0]
    unit = first.get("unit") or _("values")
    names = _(" and ").join(parameters)
    shapes = [_("{rows} by {columns}").format(rows=counted(len(d["rows"]), "row", "rows"),
                                              columns=counted(len(d["columns"]), "column", "columns"))
              for d in datas]
    shape = shapes[0] if len(set(shapes)) == 1 else _("from {first} to {last}").format(first=shapes[0],
                                                                                        last=shapes[-1])
    head = _("{heatmaps} of {unit} ({shape}), one for each value of {names} ({labels}), on one shared colour "
             "scale from {low} to {high}.").format(
        heatmaps=counted(len(datas), "heatmap", "heatmaps"), unit=unit, shape=shape, names=names,
        labels="; ".join(labels), low=fmt(limits[0]), high=fmt(limits[1]))
    stats = [point_stats(d) for d in datas]
    trends = [_trend(_("largest value"), stats[0]["max"], stats[-1]["max"], [s["max"] for s in stats])]
    if all("entropy" in s for s in stats):
        series = [s["entropy"] for s in stats]
        trends.append(_trend(_("mean row entropy (nats)"), series[0], series[-1], series))
    return _("{head} From {first} to {last}, {trends}.").format(head=head, first=labels[0], last=labels[-1],
                                                                 trends=_(" and ").join(trends))


def sweep_table(labels: list[str], datas: list[dict[str, Any]]) -> nodes.table:
    """One row per point: smallest and largest value, and mean row entropy where rows are distributions."""
    stats = [point_stats(d) for d in datas]
    columns = [_("smallest"), _("largest")] + ([_("mean row entropy (nats)")] if all("entropy" in s for s in stats)
                                               else [])
    keys = ["min", "max", "entropy"][: len(columns)]
    cells = [[fmt(s[k]) for k in keys] for s in stats]
    return data_table(_("Across the sweep"), _("point"), labels, columns, cells)
