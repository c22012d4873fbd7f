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
