"""What ``tensorviz verify`` compares of a training run (the rule of :mod:`.tolerance`): the
metrics, the steps and the snapshot steps exactly, whether it diverged, and the final loss within a
tolerance that grows with the steps; the weights not at all (their last bits differ between CPUs)."""

from __future__ import annotations

from typing import Any

from ...core.words import plural
from ...execute.compare import Comparison, Group
from .tolerance import TRAIN_ATOL, final_loss_rtol, final_loss_tolerance


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    cmp.equal(old["steps"], new.get("steps"), "data.steps")
    cmp.equal([c["metric"] for c in old["curves"]], [c["metric"] for c in new.get("curves", [])], "data.curves")
    cmp.equal([s["step"] for s in old["snapshots"]], [s["step"] for s in new.get("snapshots", [])],
              "data.snapshots")
    cmp.equal(old.get("diverged"), new.get("diverged"), "data.diverged")
    if not new.get("curves"):
        return
    metric = old["curves"][0]["metric"]
    recorded, now = old["curves"][0]["points"][-1][1], new["curves"][0]["points"][-1][1]
    where = f"the final {metric} (after {plural(old['steps'], 'step')})"
    cmp.groups.append(Group(where, "float32", 1, final_loss_rtol(old["steps"]), TRAIN_ATOL, False))
    difference, allowed = abs(now - recorded), final_loss_tolerance(old["steps"], recorded)
    if difference >= cmp.largest:
        cmp.largest, cmp.where = difference, f"{where}: stored {recorded!r}, now {now!r}"
    if not difference <= allowed:
        cmp.problems.append(f"{where}: stored {recorded!r}, now {now!r} (difference {difference:.3g}, "
                            f"allowed {allowed:.3g})")
