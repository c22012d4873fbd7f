"""What ``tensorviz verify`` compares of a patching figure: what was patched and the labels exactly,
the baselines and the effects within the tolerance of the dtype they were computed in."""

from __future__ import annotations

from typing import Any

from ...execute.compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    for key in ("patch", "metric", "rows", "columns"):
        cmp.equal(old.get(key), new.get(key), f"data.{key}")
    cmp.array([[old["clean"], old["corrupted"]]], [[new.get("clean"), new.get("corrupted")]],
              "data.clean and data.corrupted", old.get("dtype"))
    cmp.array(old["effects"], new.get("effects", []), "data.effects", old.get("dtype"))
