"""How ``run.py`` recomputes a heatmap: call the lesson's function (or read its ``result``) again.

The script's ``reproduce()`` is kept here as source text, copied into ``run.py`` after the shared
helpers (``_load_entry``, ``seeded_arguments``, ``_array``), so it runs without this package.
"""

from __future__ import annotations

from typing import Any

CODE = '''
def reproduce():
    """Run the recorded computation again; returns what the artifact stored, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    module = _load_entry()
    function = getattr(module, RECORD["function"]) if RECORD["function"] else None
    if function is None:  # the code's module-level ``result``
        value = module.result
    else:
        value = function(**seeded_arguments(function, RECORD["inputs"] or {}, RECORD["seed"], RECORD["backend"]))
    if isinstance(value, dict):
        value = value["values"]
    return {"values": _array(value).tolist()}
'''


def script() -> str:
    return CODE


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The recorded values, with the dtype they were computed in (``None``: not recorded)."""
    data = artifact["data"]
    return {"values": {"values": data["values"], "dtype": data.get("dtype")}}
