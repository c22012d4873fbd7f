"""The warm pool and the caches under the hardest rules of issue 13.

- ``kill -9`` of ``sphinx-build`` while pooled jobs run: the pool's parent, its children and
  their job folders are gone within seconds;
- the sandbox runs one process per job, and lesson code in it cannot write to the JAX
  compilation cache (outside it, the same code can: the test tells the two apart);
- ``tensorviz execute -j 2`` runs its jobs in the pool too.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import load_artifacts, run_sphinx
from hostile_util import heatmap_page, kill_leftovers, make_project, own_job_dirs, wait_until_gone
from sphinx_tensorviz.execute.processes import alive
from sphinx_tensorviz.execute.sandbox import sandbox_problem

pytestmark = pytest.mark.sphinx

SLEEPER = '''
import os, time
with open({marker!r} + f".{{os.getpid()}}", "w") as handle:
    handle.write(str(os.getppid()))
time.sleep(120)
result = [[1.0]]  # {n}
'''

PLANT = '''
import os
folder = os.environ.get("JAX_COMPILATION_CACHE_DIR", "")
try:
    with open(os.path.join(folder, "planted"), "w") as handle:
        handle.write("an executable another job would load")
    wrote = 1.0
except OSError:
    wrote = 0.0
print("threshold", os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"))
result = [[wrote]]
'''


def test_kill_9_of_the_build_takes_the_pool_and_its_jobs_with_it(tmp_path: Path) -> None:
    marker = str(tmp_path / "started")
    pages = {f"p{n}": heatmap_page(SLEEPER.format(marker=marker, n=n), f"Sleeper {n}") for n in range(2)}
    src = make_project(tmp_path / "src", pages)
    build = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(children) < 2 and time.monotonic() < deadline:
            children = [int(p.name.rsplit(".", 1)[1]) for p in tmp_path.glob("started.*")]
            time.sleep(0.2)
        assert len(children) == 2, "the jobs did not start"
        parents = {int((tmp_path / f"started.{pid}").read_text()) for pid in children}
        assert len(parents) == 1 and build.pid not in parents  # both forked by one warm parent
        assert build.pid in {_parent_of(pid) for pid in parents}
        os.kill(build.pid, signal.SIGKILL)
        build.wait()
        left = _wait_gone(children + list(parents), 15)
        assert not left, f"still alive after the build was killed: {left}"
        deadline = time.monotonic() + 10
        while own_job_dirs(build.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not own_job_dirs(build.pid)
    finally:
        build.kill()
        for pid in children:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(sandbox_problem("bwrap") is not None, reason=str(sandbox_problem("bwrap")))
def test_the_sandbox_runs_one_process_per_job_and_cannot_write_the_compilation_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache = tmp_path / "cache" / "sphinx-tensorviz" / "jax"
    boxed = make_project(tmp_path / "boxed", {"plant": heatmap_page(PLANT, "Plant")}, 'tensorviz_sandbox = "bwrap"\n')
    built = run_sphinx(boxed, "html", verbosity=1)
    assert built.summary == (1, 0, 0), built.warnings
    assert "one worker process per job: tensorviz_sandbox = 'bwrap'" in built.status  # said, at -v
    (artifact,) = load_artifacts(boxed).values()
    assert artifact["data"]["values"] == [[0.0]] and "threshold 1e9" in artifact["stdout"]
    assert not (cache / "planted").exists()
    # the same code outside the sandbox may write there: the check above is not vacuous
    open_ = make_project(tmp_path / "open", {"plant": heatmap_page(PLANT + "\n# open", "Plant")})
    built = run_sphinx(open_, "html", verbosity=1)
    assert built.summary == (1, 0, 0)
    assert re.search(r"warm numpy pool: 1 job forked; its parent's peak memory \d+ MiB", built.status)
    (artifact,) = load_artifacts(open_).values()
    assert artifact["data"]["values"] == [[1.0]] and "threshold 0" in artifact["stdout"]
    assert (cache / "planted").exists()


def test_tensorviz_execute_j_runs_its_jobs_in_the_pool(tmp_path: Path) -> None:
    from sphinx_tensorviz.cli import main

    body = "import os\nprint('parent', os.getppid())\nresult = [[{n}.0]]"
    pages = {f"p{n}": heatmap_page(body.format(n=n), f"Figure {n}") for n in range(3)}
    src = make_project(tmp_path / "src", pages)
    assert main(["execute", "-j", "2", str(src)]) == 0
    parents = {re.search(r"parent (\d+)", a["stdout"]).group(1) for a in load_artifacts(src).values()}
    assert len(load_artifacts(src)) == 3 and len(parents) == 1 and str(os.getpid()) not in parents


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2:].split()[1])


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := [p for p in pids if alive(p) and not _zombie(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2:].split()[0] == "Z"


# ------------------------------------------------------------------------------------------------
# issue 24, point 27: Ctrl-C (a real SIGINT to sphinx-build) while jobs run
# ------------------------------------------------------------------------------------------------
#: the first two jobs to start return at once, the others take a minute: when the test sends SIGINT,
#: two are finished, two are running and four are waiting for a worker
INTERRUPTED = '''
import os, pathlib, time
folder = pathlib.Path({folder!r})
earlier = len(list(folder.glob("started-*")))
(folder / "started-{name}").write_text(str(time.time()))
time.sleep(0 if earlier < 2 else 60)
(folder / "done-{name}").write_text("")
print("lesson {name}")
result = [[1.0]]
'''


def _names(folder: Path, what: str) -> set[str]:
    return {p.name.split("-", 1)[1] for p in folder.glob(f"{what}-*")}


@pytest.mark.parametrize("pool", [True, False], ids=["pool", "fresh"])
def test_sigint_stops_the_jobs_keeps_what_finished_and_exits(tmp_path: Path, pool: bool) -> None:
    folder = tmp_path / "marks"
    folder.mkdir()
    pages = {f"p{n}": heatmap_page(INTERRUPTED.format(folder=str(folder), name=f"p{n}"), f"Figure {n}")
             for n in range(8)}
    src = make_project(tmp_path / "src", pages, f"tensorviz_workers = 2\ntensorviz_worker_pool = {pool}\n")
    build = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(_names(folder, "started")) < 4 and time.monotonic() < deadline and build.poll() is None:
            time.sleep(0.1)
        assert len(_names(folder, "started")) == 4 and len(_names(folder, "done")) == 2, "the jobs did not start"
        running = lambda: [d for d in own_job_dirs(build.pid) if "-pool-" not in d.name]  # noqa: E731
        while len(running()) > 2 and time.monotonic() < deadline:  # the finished jobs' folders are gone
            time.sleep(0.1)
        started, finished = _names(folder, "started"), _names(folder, "done")
        build.send_signal(signal.SIGINT)
        try:
            _, stderr = build.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the build still runs 30 s after SIGINT (its jobs take 60 s)")
        assert build.returncode == 2 and "Interrupted!" in stderr, stderr  # as Sphinx ends on an interrupt
        assert _names(folder, "started") == started, "a job started after SIGINT"
        assert _names(folder, "done") == finished, "a running job was not stopped"
        kept = {a["stdout"].split()[-1] for a in load_artifacts(src).values()}
        assert kept == finished, stderr  # what finished is stored, nothing else
        assert not list((src / "tensorviz_artifacts" / "failures").glob("*.json"))  # no failure recorded
        assert not wait_until_gone(f"tensorviz-job-{build.pid}-", 5.0), "a worker outlived the build"
        assert not own_job_dirs(build.pid)
    finally:
        if build.poll() is None:
            build.kill()
            build.communicate()
        kill_leftovers(f"tensorviz-job-{build.pid}-")
