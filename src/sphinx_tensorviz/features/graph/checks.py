"""What a graph's data must be beyond its schema, and its size limit.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere) and, for
the limit, by the worker as soon as the graph is traced, so an oversized model says what to change.
"""

from __future__ import annotations

import math
from typing import Any


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """Ids are unique, parents and connections name known nodes, recorded activations can be drawn."""
    ids = [layer["id"] for layer in data["layers"]]
    known = set(ids)
    if len(known) != len(ids):
        return ["data/layers: duplicate ids"]
    for layer in data["layers"]:
        if layer["parent"] is not None and layer["parent"] not in known:
            return [f"data/layers: {layer['id']!r} has unknown parent {layer['parent']!r}"]
    for edge in data["connections"]:
        if edge["source"] not in known or edge["target"] not in known:
            return [f"data/connections: {edge['id']!r} joins unknown nodes"]
    for name, record in (data.get("activations") or {}).items():
        problem = _activation_problem(record)
        if problem:
            return [f"data/activations/{name}: {problem}"]
    return []


def _finite_numbers(values: Any, depth: int) -> bool:
    """A (nested, ``depth`` levels) non-empty list of finite numbers."""
    if depth == 0:
        return isinstance(values, (int, float)) and not isinstance(values, bool) and math.isfinite(values)
    return isinstance(values, list) and bool(values) and all(_finite_numbers(v, depth - 1) for v in values)


def _activation_problem(record: Any) -> str | None:
    """Why an activation record cannot be drawn; records with a layout ``problem`` carry no numbers."""
    if isinstance(record, dict) and record.get("layout") is None and isinstance(record.get("problem"), str):
        return None
    if not isinstance(record, dict) or not _finite_numbers(record.get("values"), 1):
        return "values must be finite numbers"
    if record.get("layout") in ("channels", "heads"):
        if not (_finite_numbers(record.get("maps"), 3) and isinstance(record.get("count"), int)
                and isinstance(record.get("mapShape"), list) and len(record["mapShape"]) == 2):
            return "channel/head maps need maps, count and mapShape"
        if record["layout"] == "channels" and not _finite_numbers(record.get("mean"), 2):
            return "channel maps need a finite mean map"
    elif record.get("layout", "tokens") == "tokens" and not isinstance(record.get("token"), int):
        return "a token record needs its token"
    return None


def nodes_problem(data: dict[str, Any], limit: float) -> str | None:
    """Why a traced graph is over ``tensorviz_max_graph_nodes`` (``None``: it is not)."""
    count = len(data.get("layers") or ())
    if count <= limit:
        return None
    return (f"the traced graph has {count:,} nodes, over tensorviz_max_graph_nodes = {int(limit):,}; "
            "trace a smaller configuration of the model (fewer layers) or one block of it, or raise the limit")
