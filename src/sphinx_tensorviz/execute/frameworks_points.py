"""What the comparison job of a figure with ``:frameworks:`` reads: every framework's recorded arrays.

Build side, when the job is made (the frameworks' jobs ran in an earlier wave, :mod:`.batch`): each
framework's artifact is read from the store and its arrays taken by its kind's ``framework_values``
where the kind's reproduce module has one (what both frameworks record and can be compared: a graph's
JAX checkpoints, which ``run.py`` cannot recompute; a lens's clear top-1 tokens), else its
``expected_values`` (the arrays ``run.py`` and ``tensorviz verify`` compare), so the comparison knows no
kind by name. A record may carry ``scale`` (the magnitude its rounding follows, where that is not its own
largest value) and ``mask`` (where its values are compared), which :func:`.worker.frameworks_check.compare_array`
reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ..core.kinds import kind_named

#: what a recorded array may say of how it is compared, besides its values and dtype
COMPARISON_KEYS = ("scale", "mask")


def framework_job_points(inputs: dict[str, Any], read_artifact: Callable[[str], Any]
                         ) -> list[dict[str, Any]] | None:
    """``[{"values": [framework], "contentHash": h, "data": {array: {"values", "dtype"}}}]`` in the
    author's order, or ``None`` while a framework has no stored artifact (nothing to compare yet)."""
    points = []
    for framework, content_hash in inputs["frameworks"]:
        artifact = read_artifact(content_hash)
        kind = kind_named(artifact.get("data", {}).get("kind")) if isinstance(artifact, dict) else None
        if kind is None or not kind.reproduce:
            return None
        module = importlib.import_module(kind.reproduce)
        expected = getattr(module, "framework_values", module.expected_values)(artifact)
        data = {name: {"values": record["values"], "dtype": record.get("dtype"),
                       **{key: record[key] for key in COMPARISON_KEYS if key in record}}
                for name, record in expected.items()}
        points.append({"values": [framework], "contentHash": content_hash, "data": data})
    return points
