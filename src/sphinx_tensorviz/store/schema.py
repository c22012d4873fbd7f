"""What a valid artifact is: the shipped JSON Schema, and what a schema cannot say.

The schema (``schemas/artifact.schema.json``, also the source of the reference page) fixes the
shape; :func:`consistency_errors` checks that shapes agree, references resolve and numbers are
finite. The validator is compiled once per process and imported only when a file must be checked.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any


@cache
def artifact_validator() -> Any:
    """The compiled validator for the shipped schema (compiled once per process, imported lazily).

    The schema itself is checked against its meta-schema by the tests, not on every build.
    """
    import jsonschema

    text = resources.files("sphinx_tensorviz.store").joinpath("schemas/artifact.schema.json").read_text("utf-8")
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(artifact: Any) -> list[str]:
    """Human-readable schema violations of ``artifact`` (empty when valid)."""
    errors = sorted(artifact_validator().iter_errors(artifact), key=lambda e: list(e.absolute_path))
    found = [_message(e) for e in errors]
    if not found:
        found = consistency_errors(artifact["data"])
    # jsonschema checks "date-time" only with an optional extra installed; check it ourselves
    stamp = artifact.get("generatedAt") if isinstance(artifact, dict) else None
    if isinstance(stamp, str):
        try:
            parsed = datetime.fromisoformat(stamp)
            if parsed.tzinfo is None:
                found.append("generatedAt: needs a UTC offset")
        except ValueError:
            found.append(f"generatedAt: {stamp!r} is not an ISO 8601 date-time")
    return found


#: the longest message of one violation: jsonschema's quotes the whole failing value
_MESSAGE_CHARS = 300


def _message(error: Any) -> str:
    """``path: what is wrong``, short: for a value that fits none of several shapes (``oneOf``), the
    error of the shape it came closest to, which names the cell (``data/values/7/3``); a long quoted
    value cut."""
    while error.context:  # the error that reached deepest into the value: the shape it was meant to have
        error = max(error.context, key=lambda e: len(e.absolute_path))
    text = f"{'/'.join(map(str, error.absolute_path)) or '<root>'}: {error.message}"
    if len(text) <= _MESSAGE_CHARS:
        return text
    return f"{text[:_MESSAGE_CHARS - 100]} [...] {text[-80:]}"


def consistency_errors(data: dict[str, Any]) -> list[str]:
    """What JSON Schema cannot say: shapes agree, references resolve, numbers are finite."""
    if data["kind"] == "sweep-check":
        return []  # parameter values and point hashes only; the schema says all there is to say
    if data["kind"] == "heatmap":
        values = data["values"]
        width = len(values[0])
        if any(len(row) != width for row in values):
            return ["data/values: rows have different lengths"]
        if len(data["rows"]) != len(values) or len(data["columns"]) != width:
            return [f"data: {len(data['rows'])} row and {len(data['columns'])} column labels for "
                    f"{len(values)} x {width} values"]
        if not all(math.isfinite(v) for row in values for v in row):
            return ["data/values: NaN or infinite values"]
        return []
    ids = [layer["id"] for layer in data["layers"]]
    known = set(ids)
    if len(known) != len(ids):
        return ["data/layers: duplicate ids"]
    for layer in data["layers"]:
        if layer["parent"] is not None and layer["parent"] not in known:
            return [f"data/layers: {layer['id']!r} has unknown parent {layer['parent']!r}"]
    for edge in data["connections"]:
        if edge["source"] not in known or edge["target"] not in known:
            return [f"data/connections: {edge['id']!r} joins unknown nodes"]
    for name, record in (data.get("activations") or {}).items():
        problem = _activation_problem(record)
        if problem:
            return [f"data/activations/{name}: {problem}"]
    return []


def _finite_numbers(values: Any, depth: int) -> bool:
    """A (nested, ``depth`` levels) non-empty list of finite numbers."""
    if depth == 0:
        return isinstance(values, (int, float)) and not isinstance(values, bool) and math.isfinite(values)
    return isinstance(values, list) and bool(values) and all(_finite_numbers(v, depth - 1) for v in values)


def _activation_problem(record: Any) -> str | None:
    """Why an activation record cannot be drawn; records with a layout ``problem`` carry no numbers."""
    if isinstance(record, dict) and record.get("layout") is None and isinstance(record.get("problem"), str):
        return None
    if not isinstance(record, dict) or not _finite_numbers(record.get("values"), 1):
        return "values must be finite numbers"
    if record.get("layout") in ("channels", "heads"):
        if not (_finite_numbers(record.get("maps"), 3) and isinstance(record.get("count"), int)
                and isinstance(record.get("mapShape"), list) and len(record["mapShape"]) == 2):
            return "channel/head maps need maps, count and mapShape"
        if record["layout"] == "channels" and not _finite_numbers(record.get("mean"), 2):
            return "channel maps need a finite mean map"
    elif record.get("layout", "tokens") == "tokens" and not isinstance(record.get("token"), int):
        return "a token record needs its token"
    return None
