"""A rebuild with nothing changed reads nothing: the extension leaves the project's configuration
as conf.py wrote it (Sphinx compares it with the last build's and re-reads every page otherwise)."""

from __future__ import annotations

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
