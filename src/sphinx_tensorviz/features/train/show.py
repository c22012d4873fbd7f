"""The line ``tensorviz show`` prints about a training run's data."""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from .describe import curve_sentence


def summary(data: dict[str, Any]) -> str:
    kept = ", ".join(str(s["step"]) for s in data["snapshots"]) or "none"
    diverged = f", diverged at step {data['diverged']['step']}" if data.get("diverged") else ""
    return (f"training over {plural(data['steps'], 'step')}: {curve_sentence(data['curves'][0])}; "
            f"{plural(len(data['curves']), 'metric')}, snapshots at {kept}{diverged}")
