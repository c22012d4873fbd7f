"""The line ``tensorviz show`` prints about a bar chart's data."""

from __future__ import annotations

from typing import Any


def summary(data: dict[str, Any]) -> str:
    values = data["values"]
    unit = f" of {data['unit']}" if data.get("unit") else ""
    return (f"bar chart{unit}, {len(values)} bars ({', '.join(data['labels'])}), "
            f"from {min(values):.4g} to {max(values):.4g}")
