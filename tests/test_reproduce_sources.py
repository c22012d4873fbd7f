"""``run.py`` carries the loader's, the inputs' and the tolerance's code as text: each definition
is cut from its module exactly as :func:`ast.get_source_segment` would cut it."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from sphinx_tensorviz.execute import reproduce

EXECUTE = Path(reproduce.__file__).parent
AWKWARD = ('X = {"é": 1,\r\n     "ß": 2}  # two lines, CRLF\r\n'
           'def f(a="ü"):\n    return a\n\n'
           'class K:\r    pass\r'  # old Mac line ends
           'Y = "\\x0c"; Z = 3\n')  # a form feed escape, and two statements on one line


@pytest.mark.parametrize("text", [AWKWARD, *(p.read_text("utf-8") for p in sorted(EXECUTE.glob("*.py")) if p.name != "__init__.py")])
def test_definitions_are_cut_as_get_source_segment_cuts_them(text: str) -> None:
    lines = io.StringIO(text, newline="").readlines()
    cut = [node for node in ast.parse(text).body if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign))]
    assert cut
    for node in cut:
        assert reproduce._segment(lines, node) == ast.get_source_segment(text, node)


def test_run_py_carries_the_named_definitions() -> None:
    loader, = reproduce._sources("loader.py", ("import_file",))
    assert loader.startswith("def import_file(") and "\n" in loader
