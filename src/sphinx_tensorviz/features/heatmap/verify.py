"""What ``tensorviz verify`` compares of a heatmap: its labels and scale exactly, its values within
the tolerance of the dtype they were computed in."""

from __future__ import annotations

from typing import Any

from ...execute.compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    for key in ("rows", "columns", "unit", "diverging"):
        cmp.equal(old.get(key), new.get(key), f"data.{key}")
    cmp.array(old["values"], new.get("values"), "data.values", old.get("dtype"))
