"""Counts read as English: "1 head", never "1 heads" (issue 24, point 13).

Every count the extension writes (figure labels, alt text, summaries, messages, the command's
output) goes through :func:`sphinx_tensorviz.core.words.plural`. The scan below finds every
f-string of the package that writes a value followed by a plural noun; those that are not
counts, or that can never be one, are listed with the reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from sphinx_tensorviz.core.words import plural
from sphinx_tensorviz.features.graph.activations.render import _maps, _strip, _summary
from sphinx_tensorviz.features.graph.capture.torch_params import gqa_note
from sphinx_tensorviz.features.heatmap.describe import heatmap_alt
from sphinx_tensorviz.features.heatmap.sweep_describe import sweep_alt

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sphinx_tensorviz"
#: " heads", " values", ...: a word that reads as a plural noun after a number
PLURAL_NOUN = re.compile(r"^ ([a-z]+s)\b")
#: third-person verbs that end in s ("{name} is", "{what} differs")
VERBS = {"is", "has", "was", "does", "differs", "stays", "needs", "lacks", "matches", "names", "gives", "starts",
         "joins", "holds", "restores", "moves", "agrees", "disagrees", "rises", "falls"}
#: (module, expression) -> why it needs no plural()
NOT_COUNTS = {
    ("core/protocol.py", "MAX_RETURNED_BYTES:,"): "a constant, 1 GiB",
    ("features/attention/checks.py", "cells:,"): "over a limit of at least one cell: never one",
    ("features/train/checks.py", "len(points)"): "over the most points a curve keeps: never one",
    ("features/train/directive.py", "MAX_SNAPSHOTS"): "a constant, 32",
    ("features/train/recorder.py", "MAX_METRICS"): "a constant, 8",
    ("features/heatmap/checks.py", "cells:,"): "over a limit of at least one cell: never one",
    ("features/graph/checks.py", "count:,"): "over a limit of at least one node: never one",
    ("features/graph/activation_records.py", "minimum"): "a layout's axes: two or three",
    ("execute/worker/tail_buffer.py", "self.dropped + self._size:,"): "over the printed-output limit: never one",
    ("features/graph/tour/render.py", "len(same)"): "nodes that share a label: at least two",
    ("read/sweep.py", "MAX_PARAMETERS"): "a constant, two",
    ("read/sweep.py", "total"): "over the most points a sweep may have: never one",
    ("features/heatmap/describe.py", "row_count"): "'All N rows are identical': only said of two or more",
    ("features/heatmap/describe.py", "column_count"): "'All N columns are identical': only said of two or more",
    ("features/heatmap/checks.py", "width"): "'2 x 3 values': the grid's shape, not a count of values",
    ("store/artifacts.py", "stat.st_size:,"): "over the size limit: never one byte",
    ("store/remote.py", "len(data):,"): "over the size limit: never one byte",
    ("store/files.py", "found.st_size:,"): "over the size limit: never one byte",
}


#: a field of a translated template (``_("All {row_count} rows ...")``) and the words after it
TEMPLATE_FIELD = re.compile(r"\{(\w+)(?::[^}]*)?\}( [a-z]+s\b)")


def bare_plurals() -> list[tuple[str, str, int]]:
    """(module, expression, line) of every f-string value followed by a plural noun, and of every
    field of a translated template (a message given to ``_``) followed by one (its name, then)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                for field, after in TEMPLATE_FIELD.findall(node.args[0].value):
                    noun = PLURAL_NOUN.match(after)
                    if noun and noun.group(1) not in VERBS and not noun.group(1).endswith("ss"):
                        found.append((module, field, node.lineno))
                continue
            if not isinstance(node, ast.JoinedStr):
                continue
            for value, after in zip(node.values, node.values[1:]):
                if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)):
                    continue
                noun = PLURAL_NOUN.match(after.value)
                if noun and noun.group(1) not in VERBS and not noun.group(1).endswith("ss"):
                    spec = value.format_spec
                    text = ast.unparse(value.value) + (":" + "".join(
                        str(v.value) for v in spec.values if isinstance(v, ast.Constant)) if spec else "")
                    found.append((module, text, node.lineno))
    return found


def test_plural_writes_one_in_the_singular() -> None:
    assert plural(1, "head") == "1 head"
    assert [plural(n, "head") for n in (0, 2)] == ["0 heads", "2 heads"]
    assert plural(2, "axis", "axes") == "2 axes" and plural(1, "axis", "axes") == "1 axis"
    assert plural(1234, "byte") == "1,234 bytes"


def test_no_count_is_written_with_a_bare_plural() -> None:
    found = bare_plurals()
    left = [f"{module}:{line}: {{{text}}}" for module, text, line in found if (module, text) not in NOT_COUNTS]
    assert not left, ("write these counts with core.words.plural() (a reader's, in a translated template: "
                      "core.i18n.counted()):\n" + "\n".join(left))
    assert {(module, text) for module, text, _ in found} >= set(NOT_COUNTS)  # no stale entry


def test_figures_say_one_head_one_channel_one_row_one_feature() -> None:
    metrics = {"rms": 1.0, "min": 0.0, "max": 2.0, "heads": 1}
    assert "· 1 head" in _summary({"metrics": metrics}, "heads") and "1 heads" not in _summary({"metrics": metrics}, "heads")
    record = {"layout": "channels", "axes": ["channel", "height", "width"], "count": 1, "mapShape": [2, 2],
              "maps": [[[0.0, 1.0], [1.0, 0.0]]], "mean": [[0.0, 1.0], [1.0, 0.0]], "values": [0.5]}
    label, _, _ = _maps("conv", record, "c")
    assert label.startswith("conv: 1 channel of 2×2")
    label, _, _ = _strip("pool", {"layout": "features", "values": [0.5]}, "p")
    assert label.startswith("pool: 1 feature (")
    data = {"values": [[1.0, 2.0]], "rows": ["only"], "columns": ["a", "b"], "unit": "score"}
    assert "1 row (only to only) by 2 columns" in heatmap_alt(data)
    alt = sweep_alt(["t = 1"], {"t": [1]}, [data], (1.0, 2.0))
    assert alt.startswith("1 heatmap of score (1 row by 2 columns)")
    assert gqa_note({"gqa_ratio": 8, "kv_heads": 1, "query_heads": 8}).startswith("1 key/value head, ")
