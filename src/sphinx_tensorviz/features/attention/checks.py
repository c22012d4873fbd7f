"""What an attention grid's data must be beyond its schema, and its size limit.

Checked by the store on every artifact it reads (a stored artifact may come from anywhere) and, for
the limit, by the worker before the weights are copied, so an oversized grid says what to change.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.words import plural

#: how far a query's weights may sum from one: a float32 softmax, and one in 16 bits (bfloat16 keeps 8
#: bits of mantissa, so a row of rounded weights may miss one by a few thousandths)
ROW_SUM_TOLERANCE, HALF_ROW_SUM_TOLERANCE = 1e-3, 2e-2


def row_sum_tolerance(dtype: str | None) -> float:
    return HALF_ROW_SUM_TOLERANCE if dtype in ("bfloat16", "float16") else ROW_SUM_TOLERANCE


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """Each map is tokens x tokens, its weights are probabilities, and each query's weights sum to
    about one (the zeros of a causal mask are weights like any other), or to at most one where the
    model has a learned sink that takes the rest (``learnedSink``)."""
    size = len(data["tokens"])
    tolerance = row_sum_tolerance(data.get("dtype"))
    problems = []
    for number, item in enumerate(data["maps"]):
        where = f"data/maps/{number} (layer {item['layer']} head {item['head']})"
        weights = item["weights"]
        if len(weights) != size or any(len(row) != size for row in weights):
            problems.append(f"{where}: not {size} x {size}, one row and column per token")
            continue
        if not all(math.isfinite(w) and -tolerance <= w <= 1 + tolerance for row in weights for w in row):
            problems.append(f"{where}: a weight is not a probability (between 0 and 1)")
        elif data.get("learnedSink") and any(sum(row) > 1 + tolerance for row in weights):
            problems.append(f"{where}: a query's weights sum to more than 1")
        elif not data.get("learnedSink") and any(abs(sum(row) - 1) > tolerance for row in weights):
            problems.append(f"{where}: a query's weights do not sum to 1")
    pairs = [(item["layer"], item["head"]) for item in data["maps"]]
    if len(set(pairs)) != len(pairs):
        problems.append("data/maps: a layer and head appear twice")
    return problems


def cells_problem(maps: int, tokens: int, limit: float) -> str | None:
    """Why ``maps`` maps over ``tokens`` tokens are over ``tensorviz_max_attention_cells`` (``None``: not)."""
    cells = maps * tokens * tokens
    if cells <= limit:
        return None
    return (f"{plural(maps, 'attention map')} over {plural(tokens, 'token')} have {cells:,} cells, over "
            f"tensorviz_max_attention_cells "
            f"= {int(limit):,}; name fewer :layers: or :heads:, give fewer tokens, or raise the limit in conf.py")


def data_cells_problem(data: dict[str, Any], limit: float) -> str | None:
    """:func:`cells_problem` of stored data (malformed data is the schema's to report)."""
    maps, tokens = data.get("maps"), data.get("tokens")
    if not isinstance(maps, list) or not isinstance(tokens, list):
        return None
    return cells_problem(len(maps), len(tokens), limit)
