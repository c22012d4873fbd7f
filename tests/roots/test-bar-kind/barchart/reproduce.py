"""How ``run.py`` recomputes a bar chart. The script's ``reproduce()`` is source text copied after the
package's shared helpers (``_load_entry``, ``seeded_arguments``, ``_array``), so it runs without
sphinx-tensorviz or this package, and no recorded value can become code."""

from __future__ import annotations

from typing import Any

CODE = '''
def reproduce():
    """Run the lesson's code again; returns the bar values recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    module = _load_entry()
    if not RECORD["function"]:
        return {"values": _array(module.result).tolist()}
    function = getattr(module, RECORD["function"])
    arguments = seeded_arguments(function, RECORD["inputs"] or {}, RECORD["seed"], RECORD["backend"])
    return {"values": _array(function(**arguments)).tolist()}
'''


def script() -> str:
    return CODE


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``run.py`` compares its values with, within the tolerance of the recorded dtype."""
    return {"values": {"values": artifact["data"]["values"], "dtype": artifact["data"].get("dtype")}}
