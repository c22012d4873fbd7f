"""The line ``tensorviz show`` prints about a logit lens's data."""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from .describe import final_sentence, settled_sentence


def summary(data: dict[str, Any]) -> str:
    return (f"lens, {plural(len(data['probabilities']), 'layer')} x {plural(len(data['positions']), 'position')} "
            f"({data.get('dtype')}); {settled_sentence(data)} {final_sentence(data)}")
