"""sphinx-autobuild live preview of the course: serves the pages and rebuilds after an edit.

Local only (127.0.0.1), bounded in time, and the server is always stopped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.sphinx

LESSONS = Path(__file__).resolve().parents[1] / "lessons"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(url: str, text: str, deadline: float) -> str:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = response.read().decode("utf-8")
            if text in body:
                return body
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{url} never contained {text!r}")


def test_live_preview_serves_figures_and_rebuilds_after_an_edit(tmp_path: Path) -> None:
    pytest.importorskip("sphinx_autobuild")
    src = shutil.copytree(LESSONS, tmp_path / "lessons", ignore=shutil.ignore_patterns("_build", "failures"))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "sphinx_autobuild", str(src), str(tmp_path / "out"), "--host", "127.0.0.1",
         "--port", str(port), "-q"],
        env={**os.environ, "TENSORVIZ_MODE": "cache-only"}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}/transformers-03.html"
        page = _wait_for(url, "tv-prediction", time.monotonic() + 120)
        assert 'role="img"' in page
        lesson = src / "transformers-03.md"
        lesson.write_text(lesson.read_text() + "\nA sentence added while the preview runs.\n")
        page = _wait_for(url, "A sentence added while the preview runs.", time.monotonic() + 120)
        assert 'role="img"' in page, "the figure survives the incremental rebuild"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


HOWTO = Path(__file__).resolve().parents[1] / "docs" / "howto" / "live-preview.md"


def _documented_command() -> list[str]:
    """The ``sphinx-autobuild`` command line of the how-to, as written (for a course in ``docs/``)."""
    import re
    import shlex

    lines = [line for line in re.findall(r"^sphinx-autobuild .*$", HOWTO.read_text("utf-8"), flags=re.M)]
    assert len(lines) == 1, lines
    return shlex.split(lines[0])


@pytest.mark.parametrize("flags", ["as documented", "no flags"])
def test_a_code_edit_builds_once_with_the_documented_ignore_and_never_loops(tmp_path: Path, flags: str) -> None:
    """Issue 24, point 6: an edit of lesson code runs its figure, which writes a new artifact into the
    source folder the preview watches. With the how-to's ``--ignore`` that write starts no second
    build; without it, one more build at most, which writes nothing, so it never loops."""
    pytest.importorskip("sphinx_autobuild")
    from hostile_util import heatmap_page, make_project

    pages = {"a": heatmap_page("import numpy as np\n\nresult = np.full((2, 2), 7.0)", "A"),
             "b": "# B\n\nFirst text.\n"}
    src = make_project(tmp_path / "docs", pages)
    command = _documented_command() if flags == "as documented" else ["sphinx-autobuild", "docs", "docs/_build/html"]
    assert command[:3] == ["sphinx-autobuild", "docs", "docs/_build/html"], command
    port = _free_port()
    log = tmp_path / "autobuild.log"
    with open(log, "w") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "sphinx_autobuild", *command[1:], "--host", "127.0.0.1", "--port", str(port)],
            cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=sink, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/a.html", ">7<", time.monotonic() + 120)
        lesson = src / "a.md"
        lesson.write_text(lesson.read_text("utf-8").replace("7.0", "9.0"), "utf-8")
        _wait_for(f"{base}/a.html", ">9<", time.monotonic() + 120)
        # a later edit elsewhere: once its page is served, every build the first edit caused is done
        (src / "b.md").write_text("# B\n\nSentinel text.\n", "utf-8")
        _wait_for(f"{base}/b.html", "Sentinel text.", time.monotonic() + 120)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    output = log.read_text("utf-8")
    rebuilds = output.count("Rebuilding...")
    from_store = [line for line in output.splitlines() if "Detected changes" in line and "tensorviz_artifacts" in line]
    if flags == "as documented":
        assert from_store == [] and rebuilds == 2, output  # the code edit, then the sentinel
    else:
        assert len(from_store) == 1 and rebuilds <= 3, output  # the store's write causes one build, no more
