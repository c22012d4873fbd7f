"""What a valid artifact is: the shipped JSON Schema, and what a schema cannot say.

The shipped schema (``schemas/artifact.schema.json``) fixes what every artifact has; its ``data`` is
checked against the schema of the figure kind it names (:class:`~..core.kinds.FigureKind`), then by
the kind's consistency check (shapes agree, references resolve, numbers are finite): the store knows
no kind by name. Validators are compiled once per process and imported only when a file must be checked.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from ..core.kinds import FigureKind, declared, kind_named


@cache
def envelope() -> dict[str, Any]:
    """The shipped schema of what every artifact has (its ``data`` is the kind's: :func:`data_validator`)."""
    text = resources.files("sphinx_tensorviz.store").joinpath("schemas/artifact.schema.json").read_text("utf-8")
    return json.loads(text)


@cache
def _validator(schema_text: str) -> Any:
    import jsonschema

    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def artifact_validator() -> Any:
    """The compiled validator of the envelope (compiled once per process, imported lazily).

    The schemas themselves are checked against their meta-schema by the tests, not on every build.
    """
    return _validator(json.dumps(envelope()))


def data_schema(kind: FigureKind) -> dict[str, Any]:
    """``kind``'s schema of ``data``, with the definitions every kind may use (``#/$defs/dtype``)."""
    schema = kind.data_schema()
    return {**schema, "$defs": {**envelope().get("$defs", {}), **schema.get("$defs", {})}}


def documented_schema() -> dict[str, Any]:
    """The envelope with ``data`` as one of the declared kinds' schemas: what the reference page shows."""
    schema = envelope()
    kinds = declared()
    defs = {**schema.get("$defs", {}), **{kind.name: kind.data_schema() for kind in kinds}}
    data = {**schema["properties"]["data"], "oneOf": [{"$ref": f"#/$defs/{kind.name}"} for kind in kinds]}
    return {**schema, "properties": {**schema["properties"], "data": data}, "$defs": defs}


def data_validator(kind: FigureKind) -> Any:
    return _validator(json.dumps(data_schema(kind)))


def schema_errors(artifact: Any) -> list[str]:
    """Human-readable schema violations of ``artifact`` (empty when valid): the envelope's, then those
    of its ``data`` against the schema of the kind it names, then what no schema can say."""
    errors = sorted(artifact_validator().iter_errors(artifact), key=lambda e: list(e.absolute_path))
    found = [_message(e) for e in errors]
    if not found:
        found = data_errors(artifact["data"])
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


def data_errors(data: dict[str, Any]) -> list[str]:
    """``data`` checked by its kind: the kind's schema, then its consistency check."""
    kind = kind_named(data["kind"])
    if kind is None:
        known = ", ".join(k.name for k in declared()) or "none"
        return [f"data/kind: no figure kind named {data['kind']!r} is set up here (known: {known}); "
                "is the extension that declares it in conf.py's extensions?"]
    errors = sorted(data_validator(kind).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        return [_message(e, "data") for e in errors]
    return list(kind.entry("consistency")(data)) if kind.consistency else []


#: the longest message of one violation: jsonschema's quotes the whole failing value
_MESSAGE_CHARS = 300


def _message(error: Any, within: str = "") -> str:
    """``path: what is wrong``, short: for a value that fits none of several shapes (``oneOf``), the
    error of the shape it came closest to, which names the cell (``data/values/7/3``); a long quoted
    value cut."""
    while error.context:  # the error that reached deepest into the value: the shape it was meant to have
        error = max(error.context, key=lambda e: len(e.absolute_path))
    text = f"{'/'.join(map(str, [within] * bool(within) + list(error.absolute_path))) or '<root>'}: {error.message}"
    if len(text) <= _MESSAGE_CHARS:
        return text
    return f"{text[:_MESSAGE_CHARS - 100]} [...] {text[-80:]}"
