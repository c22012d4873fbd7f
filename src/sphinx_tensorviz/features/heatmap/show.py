"""The line ``tensorviz show`` prints about a heatmap's data."""

from __future__ import annotations

from typing import Any


def summary(data: dict[str, Any]) -> str:
    rows, cols = len(data["values"]), len(data["values"][0])
    unit = f" of {data['unit']}" if data.get("unit") else ""
    flat = [v for row in data["values"] for v in row]
    return (f"heatmap{unit}, {rows} x {cols} ({'diverging' if data.get('diverging') else 'sequential'}), "
            f"values from {min(flat):.4g} to {max(flat):.4g}")
