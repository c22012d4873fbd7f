"""What a training run's data must be beyond its schema, and its size limit on weights.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere).
"""

from __future__ import annotations

import math
from typing import Any

from .curves import MAX_POINTS

_MIB = 1024 * 1024


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """Curves of bounded length, in step order, finite, within the run; snapshots once per step."""
    steps = data["steps"]
    problems = []
    for curve in data["curves"]:
        points = curve["points"]
        where = f"data/curves/{curve['metric']}"
        if len(points) > MAX_POINTS:
            problems.append(f"{where}: {len(points)} points, over {MAX_POINTS}")
        if any(not 0 <= s <= steps for s, _ in points) or any(a[0] > b[0] for a, b in zip(points, points[1:])):
            problems.append(f"{where}: steps out of order or outside 0 to {steps}")
        if not all(math.isfinite(v) for _, v in points):
            problems.append(f"{where}: NaN or infinite values")
    if len({c["metric"] for c in data["curves"]}) != len(data["curves"]):
        problems.append("data/curves: a metric is listed twice")
    kept = [s["step"] for s in data["snapshots"]]
    if kept != sorted(set(kept)) or any(s > steps for s in kept):
        problems.append("data/snapshots: steps repeated, out of order or after the last step")
    return problems


def weights_problem(data: dict[str, Any], limit: float) -> str | None:
    """Why the snapshots' files are over ``tensorviz_max_weights_mb`` (``None``: they are not)."""
    total = sum(int(s["size"]) for s in data.get("snapshots", []))
    if total <= limit * _MIB:
        return None
    return (f"the snapshots take {total / _MIB:.1f} MiB, over tensorviz_max_weights_mb = {limit:g}; keep fewer "
            ":snapshots:, use a smaller model, or raise the limit in conf.py")
