"""The traceback of failed lesson code, formatted in this process from real files (fast tier): a
library installed in a virtual environment *inside* the course folder is still a library."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from sphinx_tensorviz.execute.lesson_traceback import lesson_error


def test_a_course_local_venv_is_folded_like_any_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "course"
    site = src / ".venv" / "lib" / "python3" / "site-packages"
    (site / "shapelib").mkdir(parents=True)
    (site / "shapelib" / "__init__.py").write_text(
        "def multiply(a, b):\n    return _check(a, b)\n\n\ndef _check(a, b):\n"
        "    raise ValueError(f'shapes {a} and {b} cannot be multiplied')\n", "utf-8")
    (src / "models").mkdir()
    (src / "models" / "lesson_tb_model.py").write_text(
        "from shapelib import multiply\n\n\ndef forward(x):\n    return multiply(x, 4)\n", "utf-8")
    monkeypatch.syspath_prepend(str(src / "models"))
    monkeypatch.syspath_prepend(str(site))
    for name in ("shapelib", "lesson_tb_model"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    model = importlib.import_module("lesson_tb_model")
    with pytest.raises(ValueError) as caught:
        model.forward(5)

    error = lesson_error(caught.value, str(src), None)
    assert error.message == "models/lesson_tb_model.py:5 in forward(): ValueError: shapes 5 and 4 cannot be multiplied"
    lines = error.traceback.splitlines()
    assert lines[0] == "Traceback (your code first, most recent call last):"
    assert lines[1] == '  File "models/lesson_tb_model.py", line 5, in forward'
    # folded: shapelib's two frames, and this test's own (outside the course, so not the author's)
    assert lines[-2] == "  [3 library frames folded; innermost: shapelib/__init__.py, line 6, in _check]"
    assert lines[-1] == "ValueError: shapes 5 and 4 cannot be multiplied"
    assert str(tmp_path) not in error.traceback + error.message
    assert not [line for line in lines if "shapelib" in line and "File" in line]
