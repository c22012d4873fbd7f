"""What ``tensorviz verify`` compares of the two figure-less jobs of a figure with ``:frameworks:``.

The comparison re-runs over the same stored artifacts, so the frameworks it read must be the same, and
each array's verdict and largest difference must come out again (float64: they are computed from the
same stored values). The shared weights are re-made from the seed: their tensors' names and shapes must
be the same (their values are what each framework's figure loads, so re-running those figures, which
load the stored file, is what checks the numbers drawn).
"""

from __future__ import annotations

from typing import Any

from .compare import Comparison


def compare_check(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], stored: dict[str, Any],
                  result: dict[str, Any]) -> None:
    cmp.equal(old.get("frameworks"), new.get("frameworks"), "data.frameworks")
    verdicts = [(a["framework"], a["name"], a["agree"]) for a in old.get("arrays", [])]
    cmp.equal(verdicts, [(a["framework"], a["name"], a["agree"]) for a in new.get("arrays", [])], "data.arrays")
    differences = [[a["maxDiff"] for a in data.get("arrays", []) if a.get("maxDiff") is not None] for data in (old, new)]
    if differences[0]:
        cmp.array(differences[0], differences[1], "data.arrays[].maxDiff", "float64")


def compare_weights(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], stored: dict[str, Any],
                    result: dict[str, Any]) -> None:
    names = [sorted(data.get("tensors", {})) for data in (old, new)]
    cmp.equal(names[0], names[1], "data.tensors (names)")
    if names[0] == names[1]:
        shapes = [[size for name in names[0] for size in data["tensors"][name]] for data in (old, new)]
        cmp.array(shapes[0], shapes[1], "data.tensors (shapes)", "int64")
