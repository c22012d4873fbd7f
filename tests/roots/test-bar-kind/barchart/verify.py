"""What ``tensorviz verify`` compares of a bar chart: labels and unit exactly, values within the
tolerance of the dtype they were computed in."""

from __future__ import annotations

from typing import Any

from sphinx_tensorviz.execute.compare import Comparison


def compare(cmp: Comparison, old: dict[str, Any], new: dict[str, Any], _stored: Any, _result: Any) -> None:
    for key in ("labels", "unit"):
        cmp.equal(old.get(key), new.get(key), f"data.{key}")
    cmp.array(old["values"], new.get("values"), "data.values", old.get("dtype"))
