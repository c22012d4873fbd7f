"""The line ``tensorviz show`` prints about a traced graph."""

from __future__ import annotations

from typing import Any

from ...core.words import plural


def summary(data: dict[str, Any]) -> str:
    shape = data.get("output", {}).get("shape")
    acts = data.get("activations") or {}
    return (f"graph of {data.get('modelFile', '?')}: {plural(len(data.get('layers', [])), 'node')}, "
            f"{plural(len(data.get('connections', [])), 'connection')}, output shape {shape}, "
            f"{plural(len(acts), 'recorded checkpoint')}" + (f" ({', '.join(acts)})" if acts else ""))
