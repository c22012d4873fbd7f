"""Issue 13, case 4: workers and whatever they start never outlive their job or the build.

Real builds whose lesson code starts ``sleep`` processes in every way that used to escape: a
child holding the worker's output open, a child in its own session, a double fork with an empty
environment (no token, no session, no parent), a child of code that times out; and a real
``sphinx-build`` process killed with ``kill -9`` while its worker runs. Each ``sleep`` has a
unique argument, so the test finds exactly its own processes in ``/proc``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Build, run_sphinx
from hostile_util import (
    assert_store_valid,
    heatmap_page,
    kill_leftovers,
    located,
    make_project,
    no_warnings_for,
    nothing_left_behind,
    own_job_dirs,
    processes_matching,
    wait_until_gone,
)
from sphinx_tensorviz.execute.sandbox import sandbox_problem

pytestmark = [pytest.mark.sphinx,
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")]

#: unique sleep lengths: the test finds its own processes by them
#: sleep lengths that mark this session's test processes (per pytest process, so that two test
#: sessions on one machine never mistake each other's processes for their own)
_BASE = 3000 + os.getpid() % 600 * 10
HOLDER, SESSION, DAEMON, TIMEOUT_CHILD, ORPHAN = (str(_BASE + n) for n in range(1, 6))
MARKERS = tuple(f"sleep {n}" for n in (HOLDER, SESSION, DAEMON, TIMEOUT_CHILD, ORPHAN))

PAGES = {
    # returns at once, but its child inherits the worker's stdout and stderr
    "holder": heatmap_page(f"import subprocess\nimport numpy as np\n\nsubprocess.Popen(['sleep', '{HOLDER}'])\n"
                           "result = np.eye(2)", "Holder"),
    # a child in its own session: out of the worker's process group and session
    "session": heatmap_page(f"import subprocess\nimport numpy as np\n\n"
                            f"subprocess.Popen(['sleep', '{SESSION}'], start_new_session=True, "
                            "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nresult = np.eye(2)", "Session"),
    # a double fork with an empty environment: no token, its own session, its parent gone
    "daemon": heatmap_page(
        "import subprocess\nimport numpy as np\n\n"
        f"subprocess.run(['/bin/sh', '-c', 'setsid sleep {DAEMON} </dev/null >/dev/null 2>&1 &'], env={{}}, "
        "start_new_session=True)\nresult = np.eye(2)", "Daemon"),
    # times out while its child runs
    "slow": heatmap_page(f"import subprocess, time\nimport numpy as np\n\n"
                         f"subprocess.Popen(['sleep', '{TIMEOUT_CHILD}'], start_new_session=True)\n"
                         "time.sleep(60)\nresult = np.eye(2)", "Slow"),
}


@pytest.fixture(autouse=True, scope="module")
def _no_leftovers() -> Iterator[None]:
    yield
    kill_leftovers(*MARKERS)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    src = make_project(tmp_path_factory.mktemp("procs") / "src", PAGES, "tensorviz_timeout = 8\n")
    return src, run_sphinx(src)


def test_the_build_finishes_with_a_valid_store_and_nothing_left(built: tuple[Path, Build]) -> None:
    src, build = built
    assert build.statuscode == 0, build.warnings
    assert_store_valid(src)
    nothing_left_behind(*MARKERS)


@pytest.mark.parametrize("page", ["holder", "session", "daemon"])
def test_code_that_returns_at_once_is_a_success_not_a_timeout(built: tuple[Path, Build], page: str) -> None:
    """Its children no longer hold the job: the valid result is kept (it used to become a timeout)."""
    src, build = built
    no_warnings_for(build, src, page)
    assert "<svg" in build.html(page)
    assert "could not be computed" not in build.html(page)


def test_a_timeout_still_kills_the_code_and_its_children(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "slow", "timeout", "tensorviz_timeout")
    assert not processes_matching(f"sleep {TIMEOUT_CHILD}")


#: lesson code that ignores every signal it can and never leaves the interpreter loop
STUBBORN = ("import signal\nfor name in ('SIGTERM', 'SIGHUP', 'SIGINT'):\n"
            "    signal.signal(getattr(signal, name), signal.SIG_IGN)\n"
            "while True:\n    sum(range(1000))\n")


@pytest.mark.parametrize(("sandbox", "waiting"), [("", "time.sleep(300)\n"), ("bwrap", "time.sleep(300)\n"),
                                                  ("", STUBBORN)], ids=["sleeping", "sandboxed", "stubborn"])
def test_kill_9_of_sphinx_build_stops_the_worker_and_removes_its_folder(tmp_path: Path, sandbox: str,
                                                                       waiting: str) -> None:
    """The job guard notices that the build is gone, kills the job's processes, removes its folder."""
    if sandbox and sandbox_problem(sandbox):
        pytest.skip(f"the {sandbox} sandbox cannot run here: {sandbox_problem(sandbox)}")
    page = heatmap_page(f"import pathlib, subprocess, time\nimport numpy as np\n\n"
                        f"subprocess.Popen(['sleep', '{ORPHAN}'])\n"
                        f"{waiting}result = np.eye(2)", "Orphan")
    src = make_project(tmp_path / "src", {"orphan": page},
                       f"tensorviz_timeout = 600\ntensorviz_sandbox = {sandbox!r}\n")
    build = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not processes_matching(f"sleep {ORPHAN}") and time.monotonic() < deadline and build.poll() is None:
            time.sleep(0.1)
        time.sleep(0.5)  # the lesson code is now in its time.sleep(300)
        workers = processes_matching(f"tensorviz-job-{build.pid}-")
        assert workers and processes_matching(f"sleep {ORPHAN}") and own_job_dirs(build.pid)
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
        assert not wait_until_gone(f"tensorviz-job-{build.pid}-"), "the worker outlived the build"
        assert not wait_until_gone(f"sleep {ORPHAN}"), "the lesson's child outlived the build"
        deadline = time.monotonic() + 10
        while own_job_dirs(build.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not own_job_dirs(build.pid), own_job_dirs(build.pid)
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
        kill_leftovers(f"tensorviz-job-{build.pid}-", f"sleep {ORPHAN}")


def test_a_folder_left_by_a_dead_build_is_removed_by_the_next(tmp_path: Path) -> None:
    """Power loss leaves a job folder of a build that no longer runs: the next build removes it."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    folder = Path(tempfile.gettempdir()) / f"tensorviz-job-{pid}-0123456789ab-stale"
    folder.mkdir()
    (folder / "job.json").write_text("{}")
    src = make_project(tmp_path / "src", {"fine": heatmap_page("import numpy as np\n\nresult = np.eye(2)")})
    build = run_sphinx(src)
    assert build.statuscode == 0, build.warnings
    assert not folder.exists()


# ------------------------------------------------------------------------------------------------
# issue 24, point 24: a fork chain (its pid changes all the time, and each link starts a new session)
# ------------------------------------------------------------------------------------------------
CHAIN_SECONDS = 60  #: far longer than any bound below: a chain left running is seen by its heartbeat
CHAIN_TIMEOUT = 5

CHAIN = '''\
import os, time
import numpy as np


def chain(beat):
    """Fork, let the parent exit, start a new session: no pid, session or parent stays the same."""
    end, last = time.time() + {seconds}, 0.0
    while time.time() < end:
        if os.fork():
            os._exit(0)
        os.setsid()
        if time.time() - last > 0.05:
            last = time.time()
            try:  # in the sandbox the beat's folder is not there: the chain runs on, unseen
                with open(beat, "a") as handle:
                    handle.write(".")
            except OSError:
                pass
    os._exit(0)


{body}
result = np.eye(2)
'''


def _chain_pages(folder: Path) -> dict[str, str]:
    """Two chains: one that the worker itself becomes, one that runs beside code that times out."""
    main = f"chain({str(folder / 'main.beat')!r})"
    beside = f"if os.fork() == 0:\n    chain({str(folder / 'beside.beat')!r})\ntime.sleep(600)"
    return {name: heatmap_page(CHAIN.format(seconds=CHAIN_SECONDS, body=body), name.title())
            for name, body in (("main", main), ("beside", beside))}


def _beats(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted(folder.glob("*.beat"))}


def _chain_build(src: Path, out: Path, *extra: str) -> tuple[int, str]:
    """``sphinx-build`` as a command: its exit status and warnings; a build still running after a
    generous bound is a hang. Afterwards no process of its jobs (named by its pid) is left."""
    build = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", *extra, "-b", "html", str(src), str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, stderr = build.communicate(timeout=CHAIN_TIMEOUT + 30)
    except subprocess.TimeoutExpired:
        build.kill()
        build.communicate()
        pytest.fail(f"the build hung: still running {CHAIN_TIMEOUT + 30} s after it started")
    finally:
        kill_leftovers(f"tensorviz-job-{build.pid}-")
    assert not wait_until_gone(f"tensorviz-job-{build.pid}-", 2.0), "a process of the build's jobs outlived it"
    return build.returncode, stderr


@pytest.mark.parametrize("mode", ["pool", "fresh", "bwrap"])
def test_a_fork_chain_ends_with_its_job_and_does_not_hang_the_build(tmp_path: Path, mode: str) -> None:
    """Issue 24, point 24: both chains end with their job; a cached ``-W`` rebuild does not hang either."""
    if mode == "bwrap" and sandbox_problem("bwrap"):
        pytest.skip(f"the bwrap sandbox cannot run here: {sandbox_problem('bwrap')}")
    beats = tmp_path / "beats"
    beats.mkdir(mode=0o777)
    conf = {"pool": "", "fresh": "tensorviz_worker_pool = False\n", "bwrap": 'tensorviz_sandbox = "bwrap"\n'}[mode]
    src = make_project(tmp_path / "src", _chain_pages(beats), f"tensorviz_timeout = {CHAIN_TIMEOUT}\n{conf}")
    status, stderr = _chain_build(src, tmp_path / "out")
    assert status == 0, stderr
    assert "beside.beat" in _beats(beats) or mode == "bwrap", "the chain did not run"
    settled = _beats(beats)
    time.sleep(2)  # every live link writes its heartbeat at least 20 times a second
    assert _beats(beats) == settled, "a link of the fork chain outlived its job"
    assert not own_job_dirs(), own_job_dirs()
    status, stderr = _chain_build(src, tmp_path / "out", "-W")
    assert status == 1 and "tensorviz.timeout" in stderr and "tensorviz.crash" in stderr, stderr
    time.sleep(2)
    assert _beats(beats) == settled, "the cached rebuild started a chain that outlived it"
