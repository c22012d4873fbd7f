"""What ``tensorviz verify`` compares of a graph: its structure exactly (layer ids, connections,
output shape, which checkpoints), its output and activation values within their dtype's tolerance."""

from __future__ import annotations

from typing import Any

from ...execute.compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    cmp.equal([layer["id"] for layer in old.get("layers", [])],
              [layer["id"] for layer in new.get("layers", [])], "graph structure (layer ids)")
    cmp.equal([(c.get("source"), c.get("target")) for c in old.get("connections", [])],
              [(c.get("source"), c.get("target")) for c in new.get("connections", [])],
              "graph structure (connections)")
    old_out, new_out = old.get("output") or {}, new.get("output") or {}
    cmp.equal(old_out.get("shape"), new_out.get("shape"), "data.output.shape")
    if "values" in old_out:
        cmp.array(old_out["values"], new_out.get("values"), "data.output.values", old_out.get("dtype"))
    old_act, new_act = old.get("activations") or {}, new.get("activations") or {}
    cmp.equal(sorted(old_act), sorted(new_act), "activation checkpoints")
    for name in sorted(set(old_act) & set(new_act)):
        cmp.array(old_act[name].get("values"), new_act[name].get("values"),
                  f"data.activations[{name}].values", old_act[name].get("dtype"))
