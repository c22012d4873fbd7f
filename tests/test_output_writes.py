"""The files beside the pages: all of them there when the build returns, made in the build's own
thread (no writer thread, no change to the interpreter's switch interval or fork hooks), and a write
that fails is a warning naming the file, not a crash."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx
from sphinx_tensorviz.render.outputs import write_if_changed


def test_a_write_is_made_at_once_in_the_callers_thread(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "run.py"
    threads = set(threading.enumerate())
    write_if_changed(target, b"print(1)\n")
    assert target.read_bytes() == b"print(1)\n"  # no queue to wait for: the file is there on return
    write_if_changed(target, b"print(2)\n")
    assert target.read_bytes() == b"print(2)\n"
    assert set(threading.enumerate()) == threads


@pytest.mark.sphinx
def test_a_build_has_every_linked_file_when_it_returns(tmp_path: Path) -> None:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    for outdir in ("first", "second"):  # the second build puts back kept figures' files
        result = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only"},
                            builddir=tmp_path / outdir)
        assert result.statuscode == 0 and not result.tensorviz_warnings()
        html_dir = result.outdir
        linked = set()
        for page in html_dir.glob("*.html"):
            linked |= set(re.findall(r'(?:href|src)="(_tensorviz/[^"#?]+)"', page.read_text("utf-8")))
        assert linked, "the snapshot course links its figures' downloads"
        files = {name for name in linked if not name.endswith("/")}
        folders = linked - files  # a big graph's module files: the page loads index.js and m*.js from it
        assert files and all((html_dir / name).is_file() for name in files)
        assert all((html_dir / name / "index.js").is_file() for name in folders)
    first = {p.relative_to(tmp_path / "first"): p.read_bytes() for p in (tmp_path / "first").rglob("_tensorviz/**/*")
             if p.is_file()}
    second = {p.relative_to(tmp_path / "second"): p.read_bytes()
              for p in (tmp_path / "second").rglob("_tensorviz/**/*") if p.is_file()}
    assert first == second


@pytest.mark.sphinx
def test_an_unwritable_output_folder_is_a_warning_and_fails_under_W(tmp_path: Path) -> None:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    out = tmp_path / "html"
    out.mkdir()
    (out / "_tensorviz").write_text("a file where the extension's folder goes", "utf-8")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", "-D",
                           "tensorviz_execution_mode=cache-only", "-d", str(tmp_path / "doctrees"), str(src), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stderr
    found = [line for line in done.stderr.splitlines() if "[tensorviz.output]" in line]
    assert found and all("_tensorviz" in line and "could not write" in line for line in found), done.stderr
    assert "Traceback" not in done.stderr
    assert (out / "index.html").is_file()  # the pages were still written
