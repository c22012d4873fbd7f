"""What a logit lens's data must be beyond its schema, and its size limit.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere) and, for
the limit, by the worker before the probabilities are copied, so an oversized lens says what to change.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.words import plural

#: how far a probability may stray from [0, 1], and a top-k list from descending order
TOLERANCE = 1e-6


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """Every array has a row per layer and a column per drawn position; the positions are inputs;
    probabilities are probabilities; each top-k list descends, and no token beats the top-1."""
    problems = []
    tokens, inputs, positions = data["tokens"], data["inputs"], data["positions"]
    if len(tokens) != len(inputs):
        problems.append(f"data/tokens: {plural(len(tokens), 'label')} for {plural(len(inputs), 'input')}")
    if len(data["targets"]) != len(positions) or any(not 0 <= p < len(inputs) for p in positions):
        problems.append("data/positions: not one target per position, or a position not in the inputs")
    layers = len(data["probabilities"])
    for name in ("topIds", "topProbabilities"):
        if len(data[name]) != layers:
            problems.append(f"data/{name}: not one row per layer ({layers})")
    for layer, (chosen, ids, probs) in enumerate(zip(data["probabilities"], data["topIds"], data["topProbabilities"])):
        where = f"data (layer {layer})"
        if not len(chosen) == len(ids) == len(probs) == len(positions):
            problems.append(f"{where}: not one value per position ({len(positions)})")
            continue
        for column, (p, top, top_p) in enumerate(zip(chosen, ids, probs)):
            values = [p, *top_p]
            if len(top) != len(top_p) or not all(math.isfinite(v) and -TOLERANCE <= v <= 1 + TOLERANCE
                                                 for v in values):
                problems.append(f"{where}, position {positions[column]}: a probability is not between 0 and 1")
            elif any(a < b - TOLERANCE for a, b in zip(top_p, top_p[1:])) or p > top_p[0] + TOLERANCE:
                problems.append(f"{where}, position {positions[column]}: the top-k list does not descend "
                                "from the most probable token")
    return problems


def cells_problem(layers: int, positions: int, limit: float) -> str | None:
    """Why ``layers`` x ``positions`` cells are over ``tensorviz_max_lens_cells`` (``None``: not)."""
    cells = layers * positions
    if cells <= limit:
        return None
    return (f"a logit lens of {plural(layers, 'layer')} over {plural(positions, 'position')} has {plural(cells, 'cell')}, "
            f"over tensorviz_max_lens_cells = {int(limit):,}; give fewer tokens, or raise the limit in conf.py")


def data_cells_problem(data: dict[str, Any], limit: float) -> str | None:
    """:func:`cells_problem` of stored data (malformed data is the schema's to report)."""
    probabilities, positions = data.get("probabilities"), data.get("positions")
    if not isinstance(probabilities, list) or not isinstance(positions, list):
        return None
    return cells_problem(len(probabilities), len(positions), limit)
