"""Issue 13, case 5 in the sandbox: with ``tensorviz_sandbox = "bwrap"`` lesson code cannot read the
home folder, write the source or the store, or reach the network; and where bubblewrap cannot run,
the build says so and executes nothing.

Real builds with real bubblewrap; the sandbox tests skip (saying why) where bubblewrap is missing or
cannot create namespaces (e.g. a container without unprivileged user namespaces). ``.ci/setup``
installs it.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Build, load_artifacts, run_sphinx, snapshot, store_dir
from hostile_util import assert_store_valid, heatmap_page, make_project, nothing_left_behind
from sphinx_tensorviz.execute.sandbox import sandbox_problem

pytestmark = pytest.mark.sphinx

PROBLEM = sandbox_problem("bwrap")
CANARY = f"tensorviz-hostile-canary-{os.getpid()}"
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=f"the bwrap sandbox cannot run here: {PROBLEM}")


def _probe_code(key: Path, src: Path, port: int) -> str:
    """Lesson code that tries what the sandbox must prevent and prints what happened."""
    return heatmap_page(f'''\
import os, pathlib, socket
import numpy as np


def attempt(name, action):
    try:
        action()
        print(name, "ALLOWED")
    except Exception as exc:
        print(name, "denied", type(exc).__name__)


attempt("home-key", lambda: print(pathlib.Path({str(key)!r}).read_text()))
attempt("tilde-key", lambda: print(pathlib.Path("~/.ssh/id_rsa").expanduser().read_text()))
attempt("write-source", lambda: pathlib.Path({str(src / "planted.md")!r}).write_text("x"))
attempt("write-store", lambda: pathlib.Path({str(store_dir(src) / "planted.json")!r}).write_text("{{}}"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("write-cwd", lambda: pathlib.Path("scratch.txt").write_text("x"))
print("TMP", sorted(os.listdir("/tmp")))
print("HOME", os.environ.get("HOME"))
result = np.eye(2)
''', "Probe")


@pytest.fixture(scope="module")
def sandboxed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Build, str]]:
    root = tmp_path_factory.mktemp("sandbox")
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_rsa"
    key.write_text("DUMMY-PRIVATE-KEY\n")
    listener = socket.create_server(("127.0.0.1", 0))
    src = root / "src"
    make_project(src, {"probe": _probe_code(key, src, listener.getsockname()[1])}, 'tensorviz_sandbox = "bwrap"\n')
    (store_dir(src) / "failures").mkdir(parents=True)
    saved = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    canary = Path(tempfile.gettempdir()) / CANARY
    canary.write_text("visible?")
    try:
        build = run_sphinx(src)
    finally:
        canary.unlink()
        listener.close()
        if saved is None:
            os.environ.pop("HOME")
        else:
            os.environ["HOME"] = saved
    stdout = "\n".join(a["stdout"] for a in load_artifacts(src).values())
    yield src, build, stdout


@needs_bwrap
def test_the_sandboxed_code_runs_and_its_figure_is_stored(sandboxed: tuple[Path, Build, str]) -> None:
    src, build, stdout = sandboxed
    assert build.statuscode == 0, build.warnings
    assert not build.tensorviz_warnings(), build.warnings
    assert "<svg" in build.html("probe")
    assert "write-cwd ALLOWED" in stdout  # its own folder is writable
    assert_store_valid(src)
    nothing_left_behind()


@needs_bwrap
@pytest.mark.parametrize("attempt", ["home-key", "tilde-key", "write-source", "write-store", "network"])
def test_the_sandbox_denies(sandboxed: tuple[Path, Build, str], attempt: str) -> None:
    src, build, stdout = sandboxed
    assert f"{attempt} denied" in stdout, stdout
    assert "DUMMY-PRIVATE-KEY" not in stdout + build.html("probe")
    assert not (src / "planted.md").exists() and not (store_dir(src) / "planted.json").exists()


@needs_bwrap
def test_the_sandbox_has_a_private_tmp_and_no_home(sandboxed: tuple[Path, Build, str]) -> None:
    _, _, stdout = sandboxed
    tmp_line = next(line for line in stdout.splitlines() if line.startswith("TMP "))
    assert "tensorviz-job-" in tmp_line and CANARY not in tmp_line  # the host's /tmp is not visible
    home = next(line for line in stdout.splitlines() if line.startswith("HOME ")).split(" ", 1)[1]
    assert Path(home).parent.name.startswith("tensorviz-job-")


def test_a_sandbox_that_cannot_run_executes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No bwrap on PATH: one clear config warning, nothing executed, the build finishes (exit 0)."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    src = make_project(tmp_path / "src", {"probe": heatmap_page("import numpy as np\n\nresult = np.eye(2)")},
                       'tensorviz_sandbox = "bwrap"\n')
    before = snapshot(src) if store_dir(src).exists() else {}
    build = run_sphinx(src)
    assert build.statuscode == 0, build.warnings
    config = [w for w in build.tensorviz_warnings() if "[tensorviz.config]" in w]
    assert len(config) == 1 and "bubblewrap (bwrap) is not installed" in config[0], build.warnings
    assert "nothing was executed" in config[0]
    assert build.summary == (0, 0, 0)
    assert (snapshot(src) if store_dir(src).exists() else {}) == before
    assert "has not been computed" in build.html("probe")
    nothing_left_behind()
