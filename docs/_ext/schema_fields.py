"""``artifact-schema-fields``: a table of every field of the shipped artifact JSON Schema.

Generated when the manual is built, from ``sphinx_tensorviz/store/schemas/artifact.schema.json`` and
the schema each figure kind declares for its data, so the reference cannot drift from the schemas the
store validates against.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from sphinx_tensorviz.store.schema import documented_schema

SCHEMA = resources.files("sphinx_tensorviz.store").joinpath("schemas/artifact.schema.json")


def type_text(spec: dict[str, Any], defs: dict[str, Any]) -> str:
    if "const" in spec:
        return f"always {json.dumps(spec['const'])}"
    if "enum" in spec:
        return "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
    if "oneOf" in spec:
        names = [s["$ref"].rsplit("/", 1)[-1] if "$ref" in s else type_text(s, defs) for s in spec["oneOf"]]
        return "one of: " + ", ".join(names)
    kind = spec.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "string" and "pattern" in spec:
        return f"string matching {spec['pattern']}"
    if kind == "array" and isinstance(spec.get("items"), dict) and "type" in spec["items"]:
        return f"array of {type_text(spec['items'], defs)}"
    return kind or "any JSON value"


def walk(spec: dict[str, Any], prefix: str, defs: dict[str, Any], required: bool) -> list[tuple[str, str, str, str]]:
    """(field, type, required, description) rows, depth first."""
    rows = []
    if prefix:
        rows.append((prefix, type_text(spec, defs), "yes" if required else "no", spec.get("description", "")))
    needed = set(spec.get("required", []))
    for name, child in spec.get("properties", {}).items():
        rows.extend(walk(child, f"{prefix}.{name}" if prefix else name, defs, name in needed))
    items = spec.get("items")
    if isinstance(items, dict) and "properties" in items:
        rows.extend(walk({**items, "description": ""}, f"{prefix}[]", defs, True)[1:])
    for alternative in spec.get("oneOf", []):
        ref = alternative.get("$ref", "")
        if ref.startswith("#/$defs/"):
            name = ref.rsplit("/", 1)[-1]
            rows.extend(walk(defs[name], f"{prefix} ({name})", defs, True)[1:])
    return rows


def table(rows: list[tuple[str, str, str, str]]) -> nodes.table:
    headers = ("Field", "Type", "Required", "Description")
    group = nodes.tgroup(cols=len(headers))
    for width in (28, 22, 8, 42):
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    head += nodes.row("", *[nodes.entry("", nodes.paragraph("", h)) for h in headers])
    body = nodes.tbody()
    for field, kind, required, description in rows:
        body += nodes.row(
            "",
            nodes.entry("", nodes.paragraph("", "", nodes.literal("", field))),
            nodes.entry("", nodes.paragraph("", kind)),
            nodes.entry("", nodes.paragraph("", required)),
            nodes.entry("", nodes.paragraph("", description)),
        )
    group += head
    group += body
    result = nodes.table(classes=["artifact-schema"])
    result += group
    return result


class ArtifactSchemaFields(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        schema = documented_schema()  # the envelope, and each figure kind's own schema of its data
        self.env.note_dependency(str(SCHEMA))
        intro = nodes.paragraph("", f"{schema.get('title', 'Artifact')}: {schema.get('description', '')}")
        return [intro, table(walk(schema, "", schema.get("$defs", {}), True))]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("artifact-schema-fields", ArtifactSchemaFields)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
