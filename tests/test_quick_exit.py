"""The quick exit is opt-in: by default a command-line build exits as Python does; with
``tensorviz_quick_exit = True`` it ends with the rest of the process frozen for the interpreter's
teardown. A crashed build and a process that goes on after building are left as Python has them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx
from sphinx_tensorviz import quick_exit

#: appended to the test project's conf.py: registered before the extension's handler, so it runs after it
REPORT_AT_EXIT = """
import atexit as _atexit, gc as _gc, sys as _sys
_atexit.register(lambda: _sys.stderr.write(f"frozen at exit: {_gc.get_freeze_count()}\\n"))
"""


def _frozen_at_exit(tmp_path: Path, *options: str) -> int:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    with open(src / "conf.py", "a", encoding="utf-8") as conf:
        conf.write(REPORT_AT_EXIT)
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", "tensorviz_execution_mode=cache-only",
                           *options, "-d", str(tmp_path / "doctrees"), str(src), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "html" / "index.html").is_file()
    found = re.findall(r"frozen at exit: (\d+)", done.stderr)
    assert len(found) == 1, done.stderr
    return int(found[0])


@pytest.mark.sphinx
def test_by_default_a_command_line_build_exits_as_python_does(tmp_path: Path) -> None:
    """Nothing frozen: the teardown collects cyclic garbage (and runs its ``__del__``) for every
    extension in the process, as without this one."""
    assert _frozen_at_exit(tmp_path) == 0


@pytest.mark.sphinx
def test_quick_exit_true_exits_with_the_rest_frozen(tmp_path: Path) -> None:
    assert _frozen_at_exit(tmp_path, "-D", "tensorviz_quick_exit=1") > 1000  # every module, class and function


@pytest.mark.sphinx
def test_quick_exit_false_exits_as_python_does(tmp_path: Path) -> None:
    assert _frozen_at_exit(tmp_path, "-D", "tensorviz_quick_exit=0") == 0


@pytest.mark.sphinx
def test_a_build_inside_a_process_that_goes_on_is_left_alone(tmp_path: Path) -> None:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    built = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only", "tensorviz_quick_exit": True})
    assert built.statuscode == 0
    assert not quick_exit.command_line_build()
    assert not quick_exit._REGISTERED


def test_only_sphinx_commands_count_as_command_line_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    class Main:
        __spec__ = None

    monkeypatch.setitem(sys.modules, "__main__", Main())
    for script, expected in (("/venv/bin/sphinx-build", True), ("/venv/bin/pytest", False),
                             ("/venv/bin/tensorviz", False)):
        monkeypatch.setattr(sys, "argv", [script, "-b", "html"])
        assert quick_exit.command_line_build() is expected, script
