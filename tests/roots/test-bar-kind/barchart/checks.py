"""What bar data must be beyond its schema, and its size limit (checked on every artifact read)."""

from __future__ import annotations

import math
from typing import Any


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """One label per value, and every value finite."""
    if len(data["labels"]) != len(data["values"]):
        return [f"data: {len(data['labels'])} labels for {len(data['values'])} values"]
    return [] if all(math.isfinite(v) for v in data["values"]) else ["data/values: NaN or infinite values"]


def bars_problem(count: int, limit: float) -> str | None:
    """Why ``count`` bars are too many (``None``: they are not)."""
    if count <= limit:
        return None
    return (f"{count} bars is over tensorviz_max_bars = {int(limit)}; return fewer values from the lesson "
            "code, or raise the limit in conf.py")


def data_bars_problem(data: dict[str, Any], limit: float) -> str | None:
    return bars_problem(len(data["values"]), limit)
