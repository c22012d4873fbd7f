"""What ``tensorviz verify`` compares of an attention grid: tokens, layers and heads exactly, the
weights within the tolerance of the dtype they were computed in."""

from __future__ import annotations

from typing import Any

from ...execute.compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    cmp.equal(old.get("tokens"), new.get("tokens"), "data.tokens")
    heads = [[item["layer"], item["head"]] for item in old["maps"]]
    cmp.equal(heads, [[item["layer"], item["head"]] for item in new.get("maps", [])], "data.maps (layers and heads)")
    cmp.array([item["weights"] for item in old["maps"]], [item["weights"] for item in new.get("maps", [])],
              "data.maps.weights", old.get("dtype"))
