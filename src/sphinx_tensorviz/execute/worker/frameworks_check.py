"""The comparison of a figure computed in several frameworks (``:frameworks:``), in the worker.

The build hands the worker every framework's recorded arrays (read from the store by the kind's own
``expected_values``, what ``run.py`` compares: :mod:`..frameworks_points`), so nothing runs twice and no
framework is imported; this module compares each array the first framework records with the same array
of every other, within the tolerance of the coarser of the two dtypes (:mod:`..tolerance`, issue 8's
rule: ``|other - first| <= atol + rtol * |first|``), and records the largest difference and where it is.
"""

from __future__ import annotations

import types
from typing import Any

from ...core.kinds import worker_entry
from ...core.protocol import Job
from ..tolerance import ASSUMED_DTYPE, FLOAT_EPS, default_tolerance, is_exact


@worker_entry
def run_frameworks_check(module: types.ModuleType, job: Job) -> dict[str, Any]:
    """``data``: the frameworks compared (by hash) and one record per array and framework after the first."""
    points = list(job.sweep_points or ())
    first, others = points[0], points[1:]
    arrays, unmatched = [], set()
    for other in others:
        names = first["data"].keys() & other["data"].keys()
        unmatched |= first["data"].keys() ^ other["data"].keys()
        for name in sorted(names):
            arrays.append({"name": name, "framework": other["values"][0],
                           **compare_array(first["data"][name], other["data"][name])})
    data = {"kind": "frameworks-check",
            "frameworks": [{"name": p["values"][0], "contentHash": p["contentHash"]} for p in points],
            "arrays": arrays, "unmatched": sorted(unmatched)}
    # also as checks: a page with a failed check is read again on every build, so its warning returns
    checks = [{"name": f"{a['framework']}:{a['name']}", "passed": a["agree"], "value": a["maxDiff"],
               "description": f"{a['framework']} agrees with {first['values'][0]} on {a['name']}"} for a in arrays]
    return {"data": data, "checks": checks}


def coarser(first: str | None, other: str | None) -> str:
    """The dtype whose tolerance applies to two results: the less precise (an integer only with an integer)."""
    dtypes = [d or ASSUMED_DTYPE for d in (first, other)]
    if all(is_exact(d) for d in dtypes):
        return dtypes[0]
    floats = [d for d in dtypes if not is_exact(d)]
    return max(floats, key=lambda d: FLOAT_EPS.get(d, FLOAT_EPS[ASSUMED_DTYPE]))


def compare_array(first: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``{agree, dtype, rtol, atol, maxDiff, index}`` of two recorded arrays (``{"values", "dtype"}``).

    A record may say how it is compared: ``scale``, the magnitude its rounding follows where that is
    not its own largest value (a patching effect is a difference of metrics divided by a smaller one,
    so it carries the metrics' rounding, magnified), and ``mask``, where its values mean something to
    compare (a lens's top-1 token, where it is ahead of the second by more than the tolerance: a near
    tie may fall either way in two frameworks computing the same model). Values are compared where
    both frameworks' masks hold."""
    import numpy as np

    a = np.asarray(first["values"], dtype=np.float64)
    b = np.asarray(other["values"], dtype=np.float64)
    dtype = coarser(first.get("dtype"), other.get("dtype"))
    largest = float(max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0), first.get("scale") or 0.0,
                        other.get("scale") or 0.0))
    rtol, atol = default_tolerance(dtype, largest)
    record = {"dtype": dtype, "rtol": rtol, "atol": atol}
    if a.shape != b.shape:
        return {**record, "agree": False, "maxDiff": None, "index": [], "shapes": [list(a.shape), list(b.shape)]}
    difference = np.abs(b - a)
    for given in (first, other):
        if "mask" in given:
            difference = np.where(np.asarray(given["mask"], dtype=bool), difference, 0.0)
    where = np.unravel_index(int(np.argmax(difference)), a.shape) if a.size else ()
    return {**record, "agree": bool(np.all(difference <= atol + rtol * np.abs(a))),
            "maxDiff": float(difference.max(initial=0.0)), "index": [int(i) for i in where]}
