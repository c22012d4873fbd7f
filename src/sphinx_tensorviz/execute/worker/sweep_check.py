"""Cross-sweep checks: a small job over the stored values of every point of a sweep.

The main process hands the worker the recorded values of each point (read from the store,
so nothing is executed twice); the worker calls each named check with ``{value: array}``
(``{(v1, v2): array}`` for a two-parameter sweep), in sweep order. The build imports this
module too (for :func:`sweep_job_points`), so NumPy and the check runner are imported only
where the worker needs them.
"""

from __future__ import annotations

import types
from typing import Any

from ...core.kinds import worker_entry
from ...core.protocol import Job


def sweep_job_points(inputs: dict[str, Any], read_artifact: Any) -> list[dict[str, Any]] | None:
    """``[{"values": [...], "contentHash": h, "data": [[...]]}]`` for every point, or ``None``
    while any point has no stored artifact (the check then waits for a later build)."""
    points = []
    for values, content_hash in inputs["points"]:
        artifact = read_artifact(content_hash)
        if not isinstance(artifact, dict):
            return None
        points.append({"values": values, "contentHash": content_hash, "data": artifact["data"]["values"]})
    return points


@worker_entry
def run_sweep_check(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """Run the cross-sweep checks; ``data`` records which points (by hash) they saw."""
    import numpy as np

    from .checks import code_name, run_checks

    names = job.inputs["parameters"]
    points = job.sweep_points or ()
    table = {
        (p["values"][0] if len(names) == 1 else tuple(p["values"])): np.asarray(p["data"], dtype=np.float64)
        for p in points
    }
    checks = run_checks(module, job.options["checks"], table, code=code_name(job))
    data = {
        "kind": "sweep-check",
        "parameters": names,
        "points": [{"values": p["values"], "contentHash": p["contentHash"]} for p in points],
    }
    return {"data": data, "checks": checks}
