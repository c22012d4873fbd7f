"""What ``tensorviz verify`` compares of a cross-sweep check: it re-runs over the same stored points,
so the points must be the same and each check's value agrees within float64's tolerance."""

from __future__ import annotations

from typing import Any

from .compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], stored: dict[str, Any],
            result: dict[str, Any]) -> None:
    cmp.equal(old.get("points"), new.get("points"), "data.points")
    new_values = {c["name"]: c.get("value") for c in result.get("checks", [])}
    for check in stored.get("checks", []):
        if check.get("value") is not None:
            cmp.array([check["value"]], [new_values.get(check["name"])], f"checks[{check['name']}].value", "float64")
