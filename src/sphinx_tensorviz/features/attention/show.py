"""The line ``tensorviz show`` prints about an attention grid's data."""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from .describe import head_patterns, head_sentence


def summary(data: dict[str, Any]) -> str:
    layers = len({item["layer"] for item in data["maps"]})
    heads = len({item["head"] for item in data["maps"]})
    named = [head_sentence(item, pattern) for item, pattern in zip(data["maps"], head_patterns(data)) if pattern.name]
    tokens = plural(len(data["tokens"]), "token")
    return (f"attention, {plural(layers, 'layer')} x {plural(heads, 'head')} over {tokens} ({data.get('dtype')}); "
            + ("; ".join(named) if named else "no head has a strong pattern"))
