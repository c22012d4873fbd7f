"""The files beside the pages are written by a thread of the build: in order, all of them before the
build returns, none half-made at a fork, and a write that fails is a located warning, not a crash."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import copy_root, run_sphinx

from sphinx_tensorviz.render import background_writes
from sphinx_tensorviz.render.background_writes import close_writes, open_writes, write
from sphinx_tensorviz.render.outputs import write_if_changed


@pytest.fixture
def writer():
    open_writes()
    yield
    close_writes()


def _slow_write(target: Path, text: str, started: threading.Event | None = None,
                go: threading.Event | None = None):
    def job() -> None:
        if started is not None:
            started.set()
        if go is not None:
            assert go.wait(10)
        target.write_text(text, "utf-8")
    return job


def test_while_the_writer_has_work_the_gil_is_handed_over_quickly(writer: None, tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    assert before > background_writes.SWITCH_INTERVAL  # Python's default, 5 ms
    seen: list[float] = []
    write(tmp_path / "a", lambda: seen.append(sys.getswitchinterval()))
    assert close_writes() == []
    assert seen == [pytest.approx(background_writes.SWITCH_INTERVAL)]
    assert sys.getswitchinterval() == before  # put back once the queue was empty


def test_outside_a_build_a_write_is_made_at_once(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "run.py"
    write_if_changed(target, b"print(1)\n")
    assert target.read_bytes() == b"print(1)\n"


def test_writes_are_made_in_the_order_asked_and_all_made_at_close(writer: None, tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    started, go = threading.Event(), threading.Event()
    write(target, _slow_write(target, "first", started, go))
    assert started.wait(10)
    write_if_changed(target, b"second")  # queued behind the first: it must not be overtaken
    write(target, _slow_write(target, "third"))
    assert not target.exists()  # the first write is still held: the caller did not wait for it
    go.set()
    assert close_writes() == []
    assert target.read_text("utf-8") == "third"
    assert background_writes._WRITER is None
    assert not [t for t in threading.enumerate() if t.name == "tensorviz-writes"]


def test_a_failed_write_is_returned_with_its_file(writer: None, tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where a folder should be", "utf-8")
    target = tmp_path / "blocked" / "run.py"
    write_if_changed(target, b"print(1)\n")
    good = tmp_path / "good.txt"
    write_if_changed(good, b"still written")  # a failure does not stop the writes after it
    failed = close_writes()
    assert [path for path, _ in failed] == [target]
    assert isinstance(failed[0][1], OSError) and failed[0][1].errno == errno.ENOTDIR
    assert good.read_bytes() == b"still written"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_fork_waits_for_the_queue_and_the_child_writes_in_place(writer: None, tmp_path: Path) -> None:
    target = tmp_path / "queued.txt"
    started, go = threading.Event(), threading.Event()
    write(target, _slow_write(target, "made before the fork", started, go))
    assert started.wait(10)
    threading.Timer(0.2, go.set).start()  # the fork below must wait for this write
    pid = os.fork()
    if pid == 0:  # the child: the parent's queued write is complete, and its own writes are immediate
        ok = target.read_text("utf-8") == "made before the fork" and background_writes._WRITER is None
        child_file = tmp_path / "child.txt"
        write_if_changed(child_file, b"child")
        ok = ok and child_file.read_bytes() == b"child"
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert close_writes() == []


@pytest.mark.sphinx
def test_a_build_has_every_linked_file_when_it_returns(tmp_path: Path) -> None:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    for outdir in ("first", "second"):  # the second build puts back kept figures' files
        result = run_sphinx(src, confoverrides={"tensorviz_mode": "cache-only"},
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
        assert background_writes._WRITER is None
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
                           "tensorviz_mode=cache-only", "-d", str(tmp_path / "doctrees"), str(src), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0, done.stderr
    found = [line for line in done.stderr.splitlines() if "[tensorviz.output]" in line]
    assert found and all("_tensorviz" in line and "could not write" in line for line in found), done.stderr
    assert "Traceback" not in done.stderr
    assert (out / "index.html").is_file()  # the pages were still written
