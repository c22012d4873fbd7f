"""What a patching figure's data must be beyond its schema, and its bound on patched passes.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere) and, for
the bound, by the worker before anything is patched, so an oversized figure says what to change
instead of running for an hour.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.words import plural


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """The effects are rows x columns finite numbers, and the baselines differ (they divided them)."""
    problems = []
    rows, columns, effects = data["rows"], data["columns"], data["effects"]
    if len(effects) != len(rows) or any(len(row) != len(columns) for row in effects):
        problems.append(f"data/effects: not {len(rows)} x {len(columns)}, one row per layer and a column per "
                        f"{'head' if data['patch'] == 'heads' else 'position'}")
    if not all(math.isfinite(value) for row in effects for value in row):
        problems.append("data/effects: a value is not a finite number")
    if not (math.isfinite(data["clean"]) and math.isfinite(data["corrupted"])) or data["clean"] == data["corrupted"]:
        problems.append("data/clean, data/corrupted: the baselines are not two different finite numbers")
    return problems


def passes_problem(layers: int, across: int, patch: str, limit: float) -> str | None:
    """Why patching ``layers`` x ``across`` places is over ``tensorviz_max_patch_passes`` (``None``: not)."""
    passes = layers * across
    if passes <= limit:
        return None
    what = "head" if patch == "heads" else "position"
    return (f"patching {patch} over {plural(layers, 'layer')} x {plural(across, what)} needs {passes:,} patched "
            f"forward passes, over tensorviz_max_patch_passes = {int(limit):,}; nothing was run. Patch heads, give "
            "a shorter input, or raise the limit in conf.py")


def data_passes_problem(data: dict[str, Any], limit: float) -> str | None:
    """:func:`passes_problem` of stored data (malformed data is the schema's to report)."""
    rows, columns = data.get("rows"), data.get("columns")
    if not isinstance(rows, list) or not isinstance(columns, list):
        return None
    return passes_problem(len(rows), len(columns), str(data.get("patch")), limit)
