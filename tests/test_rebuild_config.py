"""A rebuild with nothing changed reads nothing: the extension leaves the project's configuration
as conf.py wrote it (Sphinx compares it with the last build's and re-reads every page otherwise)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx

#: myst-parser's ``dollarmath`` rewrites ``mathjax4_config`` on every build by itself (a project
#: with myst-parser alone says so too), so the root is built without it: what is left is ours.
NO_MATH = {"myst_enable_extensions": []}


@pytest.mark.sphinx
def test_a_rebuild_with_nothing_changed_says_nothing_changed_and_reads_nothing(tmp_path: Path) -> None:
    srcdir = copy_root("snapshot", tmp_path / "src", with_store=True)
    first = run_sphinx(srcdir, confoverrides=NO_MATH)
    assert first.statuscode == 0, first.warnings
    assert first.app.config.html_static_path == [], "the extension must not add to html_static_path"
    static = first.outdir / "_static" / "tensorviz"
    shipped = Path(__import__("sphinx_tensorviz").__file__).parent / "static" / "tensorviz"
    for name in ("tensorviz.css", "tensorviz.js", "tensorviz-explore.js"):
        assert (static / name).read_bytes() == (shipped / name).read_bytes()
    assert '_static/tensorviz/tensorviz.css' in first.html("index")

    second = run_sphinx(srcdir, confoverrides=NO_MATH)
    assert "configuration has changed" not in second.status, second.status
    assert "0 added, 0 changed, 0 removed" in second.status
    assert second.app.config.html_static_path == []


@pytest.mark.sphinx
def test_every_html_builder_gets_the_static_files(tmp_path: Path) -> None:
    """singlehtml writes no extra pages (no ``html-collect-pages``): the files come all the same."""
    srcdir = copy_root("snapshot", tmp_path / "src", with_store=True)
    built = run_sphinx(srcdir, "singlehtml", confoverrides=NO_MATH)
    assert (built.outdir / "_static" / "tensorviz" / "tensorviz-graph.js").is_file()
    assert built.app.config.html_static_path == []


@pytest.mark.sphinx
def test_rebuilding_the_course_with_nothing_changed_says_nothing_changed(tmp_path: Path) -> None:
    """The course's own conf.py too: Sphinx rewrites ``html_css_files`` entries and myst-parser's
    ``dollarmath`` rewrites ``mathjax4_config`` after conf.py runs, so the course adds its
    stylesheet in ``setup()`` and writes MathJax's value as it is rewritten: a rebuild compares equal."""
    lessons = Path(__file__).resolve().parents[1] / "lessons"
    course = tmp_path / "lessons"
    shutil.copytree(lessons, course, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    env = {**os.environ, "TENSORVIZ_MODE": "cache-only", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "sphinx", "-b", "html", str(course), str(tmp_path / "html")]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr
    second = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert second.returncode == 0, second.stderr
    assert "configuration has changed" not in second.stdout, second.stdout
    assert "0 added, 0 changed, 0 removed" in second.stdout
