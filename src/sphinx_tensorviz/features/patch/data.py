"""Patching results as the kind's data: the normalised effect of every place, with its baselines.

The effect of a patched run is ``(patched - corrupted) / (clean - corrupted)``: 0 where the patch
changed nothing, 1 where it restored the clean metric, negative where it moved the metric the other
way. Dividing needs the two baselines to differ: where they are (nearly) equal the input pair shows
nothing to restore, and the figure says so instead of drawing noise divided by noise.
"""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from ...execute.worker.loader import BadResult

#: how close the clean and corrupted metrics may be, relative to the larger, before there is nothing
#: to normalise by (plus :data:`NEAR_ZERO`, for two metrics at zero): far above float32's rounding of a
#: forward pass, and below any difference worth drawing (a tiny random model's logits differ by 1e-3)
NEAR_EQUAL = 1e-4
NEAR_ZERO = 1e-6


def normalised(patched: list[list[float]], clean: float, corrupted: float) -> list[list[float]]:
    """Each patched metric as the fraction of the clean - corrupted difference it restores."""
    gap = clean - corrupted
    if abs(gap) <= NEAR_EQUAL * max(abs(clean), abs(corrupted)) + NEAR_ZERO:
        raise BadResult(f"the clean and corrupted inputs give (nearly) the same metric ({clean:.6g} and "
                        f"{corrupted:.6g}): there is no difference for a patch to restore. Choose a corrupted "
                        "input that changes the answer, or another :metric:")
    return [[(value - corrupted) / gap for value in row] for row in patched]


def column_labels(patch: str, clean: list[str], corrupted: list[str], heads: int) -> list[str]:
    """A column per head (``head 0``), or per position (``3 A``; ``3 A/B`` where the inputs differ)."""
    if patch == "heads":
        return [f"head {n}" for n in range(heads)]
    return [f"{n} {a}" if a == b else f"{n} {a}/{b}" for n, (a, b) in enumerate(zip(clean, corrupted))]


def patch_data(found: dict[str, Any], options: dict[str, Any], clean_labels: list[str],
               corrupted_labels: list[str]) -> dict[str, Any]:
    """``data`` for the heatmap: rows are layers, columns positions or heads, cells the normalised effects."""
    length = len(options["clean"])
    for labels in (clean_labels, corrupted_labels):
        if len(labels) != length:
            raise BadResult(f":tokens: gives {plural(len(labels), 'label')} for {plural(length, 'position')}")
    effects = normalised(found["patched"], found["clean"], found["corrupted"])
    heads = len(effects[0]) if options["patch"] == "heads" else 0
    return {
        "kind": "patch",
        "patch": options["patch"],
        "metric": options["metric"],
        "clean": found["clean"],
        "corrupted": found["corrupted"],
        "rows": [f"layer {n}" for n in range(len(effects))],
        "columns": column_labels(options["patch"], clean_labels, corrupted_labels, heads),
        "effects": effects,
        "dtype": found["dtype"],
    }
