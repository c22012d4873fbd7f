"""Execution on a real Dask cluster on this machine.

- ``dask-local``: a LocalCluster of two process workers (one thread each) builds the heatmap root
  (NumPy, JAX, PyTorch) with the same artifacts, byte for byte but the time stamp, as local workers.
- A separate ``dask scheduler`` / ``dask worker`` pair, the worker started in a mount namespace
  (bubblewrap) where the course folder is an empty tmpfs: the jobs' files travel with them.
- A Dask worker killed mid-job (lesson code kills the worker that runs it): retried once, then a
  failure that says what happened.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Build, artifact_files, copy_root, run_sphinx, store_dir, without_generated_at
from sphinx_tensorviz.execute import task_folders

distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")
pytestmark = pytest.mark.sphinx

DASK = Path(sys.executable).parent / "dask"


def same_artifacts(ours: Path, theirs: Path) -> None:
    mine, other = artifact_files(ours), artifact_files(theirs)
    assert set(mine) == set(other) and mine
    for content_hash, path in mine.items():
        assert without_generated_at(path) == without_generated_at(other[content_hash])


@pytest.fixture(scope="module")
def local_cli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = copy_root("cli", tmp_path_factory.mktemp("dask-baseline") / "cli")
    assert run_sphinx(src).summary == (2, 0, 0)
    return src


def test_local_cluster_builds_the_same_artifacts(tmp_path: Path) -> None:
    local = copy_root("heatmap", tmp_path / "local")
    on_dask = copy_root("heatmap", tmp_path / "dask")
    assert run_sphinx(local).summary == (4, 0, 0)
    built = run_sphinx(on_dask, confoverrides={"tensorviz_executor": "dask-local", "tensorviz_workers": 2})
    assert built.summary == (4, 0, 0)
    assert built.tensorviz_warnings() == []
    assert "tensorviz: executing..." in built.status  # per-figure progress
    same_artifacts(on_dask, local)


# -- a separate scheduler and a worker that cannot see the course -------------------------

def _bwrap_works() -> bool:
    if shutil.which("bwrap") is None:
        return False
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", "/mnt", "true"], capture_output=True)
    return done.returncode == 0


@contextlib.contextmanager
def dask_processes(base: Path, hidden: Path | None = None) -> Iterator[tuple[str, int]]:
    """A ``dask scheduler`` and one ``dask worker`` process (in a mount namespace where ``hidden`` is an
    empty tmpfs, if given); yields the scheduler's address and pid, and stops both."""
    scheduler_file = base / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.STDOUT, "start_new_session": True}
    scheduler = subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                  "--scheduler-file", str(scheduler_file)], **quiet)  # type: ignore[call-overload]
    namespace = ["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(hidden), "--"] if hidden else []
    worker = subprocess.Popen([*namespace, str(DASK), "worker", "--scheduler-file", str(scheduler_file),
                               "--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--memory-limit", "0"],
                              **quiet)  # type: ignore[call-overload]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.is_file() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text("utf-8"))["address"]
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=60)
        yield address, scheduler.pid
    finally:
        for process in (worker, scheduler):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # a worker stopped mid-task leaves its task folder for the next task here; there is none
        task_folders.remove_abandoned(Path(tempfile.gettempdir()))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """A scheduler and one worker process; the worker sees an empty folder where courses live."""
    if not _bwrap_works():
        pytest.skip("needs bubblewrap (bwrap) to hide the course from the Dask worker")
    base = tmp_path_factory.mktemp("cluster")
    hidden = base / "courses"
    hidden.mkdir()
    with dask_processes(base, hidden) as (address, _), distributed.Client(address, timeout=60) as client:
        yield {"address": address, "courses": hidden, "client": client}


def test_a_worker_without_the_source_tree_runs_the_jobs(cluster: dict, local_cli: Path) -> None:
    src = copy_root("cli", cluster["courses"] / "cli")  # type: ignore[operator]
    client = cluster["client"]
    assert (src / "models" / "grid.py").is_file()
    # the worker really cannot see the course (nor its local helper module)
    seen = client.run(os.path.exists, str(src / "models" / "grid.py"))  # type: ignore[attr-defined]
    assert list(seen.values()) == [False]
    built = run_sphinx(src, confoverrides={"tensorviz_executor": cluster["address"]})
    assert built.summary == (2, 0, 0), built.warnings
    assert built.tensorviz_warnings() == []
    same_artifacts(src, local_cli)


def test_files_a_job_returns_come_back_from_a_worker_without_the_source_tree(cluster: dict) -> None:
    """A ``tv-train``'s weights, written in the worker's job folder on the cluster, reach the store here."""
    src = copy_root("train", cluster["courses"] / "train")  # type: ignore[operator]
    (src / "jax.md").write_text("# Nothing here\n", "utf-8")
    built = run_sphinx(src, confoverrides={"tensorviz_executor": cluster["address"]})
    assert built.summary == (1, 0, 0), built.warnings
    (artifact,) = (json.loads(p.read_text("utf-8")) for p in artifact_files(src).values())
    for snapshot in artifact["data"]["snapshots"]:
        weights = store_dir(src) / "weights" / f"{snapshot['sha256']}.safetensors"
        assert hashlib.sha256(weights.read_bytes()).hexdigest() == snapshot["sha256"]


def test_verify_runs_on_the_cluster(cluster: dict, local_cli: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    src = cluster["courses"] / "verify"  # type: ignore[operator]
    shutil.copytree(local_cli, src, ignore=shutil.ignore_patterns("_build"))
    code = main(["verify", str(src), "-D", f"tensorviz_executor={cluster['address']}"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "2 of 2 artifacts reproduced" in out


def test_gpu_figures_need_a_worker_with_a_gpu_resource(cluster: dict) -> None:
    src = copy_root("cli", cluster["courses"] / "gpu")  # type: ignore[operator]
    built = run_sphinx(src, confoverrides={"tensorviz_executor": cluster["address"], "tensorviz_device": "gpu"})
    assert built.summary == (0, 0, 0) and "2 not computed" in built.status
    config = [w for w in built.tensorviz_warnings() if "tensorviz.config" in w]
    assert len(config) == 1 and "no Dask worker offers a GPU resource" in config[0]
    assert "--resources GPU=1" in config[0] and "2 figure(s) were not executed" in config[0]
    assert not store_dir(src).exists() or not list(store_dir(src).rglob("*.json"))  # they run once a GPU joins


def test_an_unreachable_scheduler_warns_and_records_nothing(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_tensorviz.execute import dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 2)
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    src = copy_root("cli", tmp_path / "cli")
    built = run_sphinx(src, confoverrides={"tensorviz_executor": address})
    warning, *misses = built.tensorviz_warnings()
    assert f"tensorviz_executor = {address!r}: cannot use the Dask cluster" in warning
    assert "2 figure(s) were not executed" in warning and "tensorviz.config" in warning
    assert len(misses) == 2 and all("tensorviz.cache_miss" in m for m in misses)
    assert not store_dir(src).exists() or not list(store_dir(src).rglob("*.json"))  # retried next build


# -- a Dask worker killed mid-job ----------------------------------------------------------

KILLER = """
```{{tv-heatmap}}
:alt: {alt}

import os, pathlib, signal, time
import numpy as np

def dask_worker():
    # the nearest ancestor that is not tensorviz's own (the worker, the job guard): the Dask worker
    pid = os.getppid()
    while b"sphinx_tensorviz" in pathlib.Path(f"/proc/{{pid}}/cmdline").read_bytes():
        pid = int(pathlib.Path(f"/proc/{{pid}}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return pid


marker = pathlib.Path({marker!r})
if {always} or not marker.exists():
    marker.write_text("killed once")
    os.kill(dask_worker(), signal.SIGKILL)
    time.sleep(60)
result = np.full((2, 2), {value})
```
"""


def test_a_killed_worker_is_retried_once_then_recorded(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "sphinx_tensorviz"]\nexclude_patterns = ["_build"]\n'
                                 "tensorviz_timeout = 120\n", "utf-8")
    once = KILLER.format(alt="Killed once.", marker=str(tmp_path / "once"), always=False, value=1.0)
    always = KILLER.format(alt="Killed always.", marker=str(tmp_path / "always"), always=True, value=2.0)
    (src / "index.md").write_text(f"# Killers\n{once}\n{always}", "utf-8")
    before = {p.name for p in Path(tempfile.gettempdir()).glob(f"{task_folders.PREFIX}*")}
    built: Build = run_sphinx(src, confoverrides={"tensorviz_executor": "dask-local", "tensorviz_workers": 2})
    assert built.summary == (2, 0, 1), built.warnings
    (warning,) = built.tensorviz_warnings()
    assert "index.md:" in warning and "the Dask worker running it was lost 2 times" in warning
    (artifact,) = [json.loads(p.read_text("utf-8")) for p in artifact_files(src).values()]
    assert artifact["data"]["values"] == [[1.0, 1.0], [1.0, 1.0]]  # the one that survived its retry
    (record,) = [json.loads(p.read_text("utf-8")) for p in (store_dir(src) / "failures").glob("*.json")]
    assert record["subtype"] == "crash" and "lost 2 times" in record["message"]
    # the three killed workers' task folders went with the cluster
    left = [p.name for p in Path(tempfile.gettempdir()).glob(f"{task_folders.PREFIX}*") if p.name not in before]
    assert left == []


def test_a_lost_scheduler_leaves_the_open_figures_for_the_next_build(tmp_path: Path) -> None:
    src = copy_root("cli", tmp_path / "cli")
    with dask_processes(tmp_path) as (address, scheduler_pid):
        with (src / "index.md").open("a", encoding="utf-8") as page:  # lesson code that kills the scheduler
            page.write(f"\n```{{tv-heatmap}}\n:alt: Kills the scheduler.\n\nimport os, signal, time\n"
                       f"import numpy as np\nos.kill({scheduler_pid}, signal.SIGKILL)\ntime.sleep(3)\n"
                       "result = np.ones((2, 2))\n```\n")
        built = run_sphinx(src, confoverrides={"tensorviz_executor": address})
    lost = [w for w in built.tensorviz_warnings() if "tensorviz.config" in w]
    assert len(lost) == 1 and "cannot use the Dask cluster" in lost[0] and "scheduler" in lost[0]
    assert "run again on the next build" in lost[0]
    assert not list((store_dir(src) / "failures").glob("*.json"))  # nothing recorded against the code
