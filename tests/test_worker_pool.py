"""Warm worker pools: jobs forked from a parent that imported the framework once.

Real builds with real worker processes (NumPy, PyTorch and JAX parents). Each job of
the isolation page first records whether it sees anything an earlier job left (a global,
a monkeypatched NumPy, a module, PyTorch's default dtype and RNG seed), then leaves all of
those itself; whatever order the pool runs them in, every job must see none. The lesson
code also prints its parent's pid, so the tests can tell a forked job from a fresh worker.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from conftest import Build, load_artifacts, run_sphinx
from hostile_util import assert_store_valid, heatmap_page, kill_leftovers, located, make_project, nothing_left_behind
from sphinx_tensorviz.execute.pool import pool_problem
from sphinx_tensorviz.execute.processes import alive

LEAKS = '''
import builtins, sys, os, numpy, torch
seen = [
    float(hasattr(builtins, "TENSORVIZ_LEAK")),
    float(getattr(numpy, "patched", False) or numpy.add(1, 1) != 2),
    float("tensorviz_leaked_module" in sys.modules),
    float(torch.get_default_dtype() != torch.float32),
    float(torch.initial_seed() != 0),
]
print("parent", os.getppid(), "pid", os.getpid())
builtins.TENSORVIZ_LEAK = True
numpy.patched = True
numpy.add = lambda *a, **k: 0
sys.modules["tensorviz_leaked_module"] = sys
torch.set_default_dtype(torch.float64)
torch.manual_seed(1234)
result = [seen]  # job {n}
'''

JAX_CHECK = '''
import os
from jax._src import xla_bridge
started_before = len(xla_bridge._backends)  # a backend started in the pool's parent would show here
import jax.numpy as jnp
print("parent", os.getppid(), "pid", os.getpid())
result = jnp.array([[float(started_before), float(jnp.ones((2, 2)).sum())]])
'''

PARENT_COMMAND = '''
import os
print("parent command", open(f"/proc/{os.getppid()}/cmdline").read().replace("\\0", " "))
result = [[3.0]]
'''

DETERMINISM = '''
import sys, torch
switched_on = torch.are_deterministic_algorithms_enabled()
inductor_before = "torch._inductor.config" in sys.modules
import torch._inductor.config as inductor
result = [[float(switched_on), float(inductor_before), float(inductor.deterministic)]]
'''

CRASH = '''
import os, signal
print("parent", os.getppid(), "pid", os.getpid())
os.kill(os.getpid(), signal.SIGKILL)
result = [[1.0]]
'''

HANG = '''
import os, subprocess, time
print("parent", os.getppid(), "pid", os.getpid(), flush=True)
subprocess.Popen(["sleep", "301"])  # tensorviz-pool-stray
time.sleep(300)
result = [[1.0]]
'''


def _parents(built_src: Path) -> dict[str, tuple[int, int]]:
    """content hash -> (parent pid, pid) printed by each stored job."""
    found = {}
    for content_hash, artifact in load_artifacts(built_src).items():
        match = re.search(r"parent (\d+) pid (\d+)", artifact["stdout"])
        if match:
            found[content_hash] = (int(match.group(1)), int(match.group(2)))
    return found


def _pages(jobs: int) -> dict[str, str]:
    body = "\n\n".join(heatmap_page(LEAKS.replace("{n}", str(n)), f"Job {n}", ":backend: torch")
                       .split("\n", 2)[2] for n in range(jobs))
    return {"leaks": "# Leaks\n\n" + body, "jaxpage": heatmap_page(JAX_CHECK, "JAX after fork", ":backend: jax")}


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    src = make_project(tmp_path_factory.mktemp("pool") / "src", _pages(4))
    return src, run_sphinx(src, "html", parallel=2)  # sphinx-build -j 2


@pytest.mark.sphinx
def test_forked_jobs_see_nothing_another_job_left(pooled: tuple[Path, Build]) -> None:
    src, built = pooled
    assert built.summary == (5, 0, 0), built.warnings
    torch_jobs = [a for a in load_artifacts(src).values() if a["request"]["backend"] == "torch"]
    assert len(torch_jobs) == 4
    for artifact in torch_jobs:
        assert artifact["data"]["values"] == [[0.0, 0.0, 0.0, 0.0, 0.0]], artifact["stdout"]


@pytest.mark.sphinx
def test_jobs_of_one_backend_are_children_of_one_warm_parent_that_is_gone_after_the_build(
        pooled: tuple[Path, Build]) -> None:
    src, _ = pooled
    artifacts = load_artifacts(src)
    parents = _parents(src)
    torch_parents = {parents[h][0] for h, a in artifacts.items() if a["request"]["backend"] == "torch"}
    jax_parents = {parents[h][0] for h, a in artifacts.items() if a["request"]["backend"] == "jax"}
    assert len(torch_parents) == 1 and len(jax_parents) == 1 and torch_parents != jax_parents
    assert os.getpid() not in torch_parents | jax_parents  # forked by a pool, not started by the build
    assert len({pid for _, pid in parents.values()}) == 5  # a fresh child per job
    assert not any(alive(pid) for pid in torch_parents | jax_parents)  # (other builds on the machine may
    nothing_left_behind()  # have pools of their own: only this build's parents are checked)


@pytest.mark.sphinx
def test_jax_works_in_a_forked_child_and_its_parent_never_started_a_backend(pooled: tuple[Path, Build]) -> None:
    src, _ = pooled
    (jax_job,) = [a for a in load_artifacts(src).values() if a["request"]["backend"] == "jax"]
    assert jax_job["data"]["values"] == [[0.0, 4.0]]


@pytest.mark.sphinx
def test_every_pooled_execution_records_its_time_and_peak_memory(pooled: tuple[Path, Build]) -> None:
    src, built = pooled
    assert_store_valid(src)
    for artifact in load_artifacts(src).values():
        facts = artifact["execution"]
        assert set(facts) == {"seconds", "peakMemoryMb"}
        assert facts["seconds"] > 0 and facts["peakMemoryMb"] > 1
    page = (built.outdir / "_tensorviz" / "execution-times.html").read_text("utf-8")
    assert page.count('<a href="../leaks.html">leaks</a>') == 4 and '<a href="../jaxpage.html">' in page
    assert '<html lang="en">' in page and "<caption>" in page and page.count('<th scope="col"') == 6


@pytest.mark.sphinx
def test_a_crash_and_a_hang_cost_one_figure_each_and_leave_nothing(tmp_path: Path) -> None:
    pages = {"crash": heatmap_page(CRASH, "Crash"), "hang": heatmap_page(HANG, "Hang"),
             "fine": heatmap_page("import os\nprint('parent', os.getppid(), 'pid', os.getpid())\nresult = [[2.0]]",
                                  "Fine")}
    src = make_project(tmp_path / "src", pages, "tensorviz_timeout = 8\n")
    try:
        built = run_sphinx(src, "html")
        located(built, src, "crash", "crash", "killed by SIGKILL")
        located(built, src, "hang", "timeout", "still running after 8 s")
        assert built.summary == (3, 0, 2)  # executed counts the failed ones too
        (fine,) = load_artifacts(src).values()
        assert fine["data"]["values"] == [[2.0]]
        parent = _parents(src)[fine["contentHash"]][0]
        assert parent != os.getpid() and not alive(parent)  # it ran in the pool, which is gone
        nothing_left_behind("sleep 301")
        assert_store_valid(src)
    finally:
        kill_leftovers("sleep 301")


#: lesson code that kills the process it runs under: with the pool, the warm parent of every job
PARRICIDE = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nresult = [[1.0]]"


@pytest.mark.sphinx
def test_a_job_that_kills_the_warm_parent_costs_only_its_own_figure(tmp_path: Path) -> None:
    """Jobs forked beside it lose their parent too: they run again on their own, and succeed."""
    slow = "import os, time\ntime.sleep(2)\nprint('parent', os.getppid(), 'pid', os.getpid())\nresult = [[{n}.0]]"
    pages = {"killer": heatmap_page(PARRICIDE, "Killer"),
             **{f"bystander{n}": heatmap_page(slow.format(n=n), f"Bystander {n}") for n in (2, 3)}}
    src = make_project(tmp_path / "src", pages, "tensorviz_workers = 3\n")
    built = run_sphinx(src, "html")
    located(built, src, "killer", "crash", "before it returned a result")
    assert built.summary == (3, 0, 1)
    assert sorted(a["data"]["values"][0][0] for a in load_artifacts(src).values()) == [2.0, 3.0]
    nothing_left_behind("tensorviz-job-")
    assert_store_valid(src)


@pytest.mark.sphinx
def test_with_the_pool_off_each_job_is_a_fresh_worker_of_the_build(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"one": heatmap_page(PARENT_COMMAND, "One")}, "tensorviz_worker_pool = False\n")
    built = run_sphinx(src, "html")
    assert built.summary == (1, 0, 0)
    ((artifact,),) = [list(load_artifacts(src).values())]
    assert "sphinx_tensorviz.execute.jobguard" in artifact["stdout"] and "zygote" not in artifact["stdout"]


@pytest.mark.sphinx
def test_a_pooled_job_is_a_child_of_the_warm_parent_not_of_a_job_guard(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"one": heatmap_page(PARENT_COMMAND, "One")})
    assert run_sphinx(src, "html").summary == (1, 0, 0)
    ((artifact,),) = [list(load_artifacts(src).values())]
    assert "sphinx_tensorviz.execute.worker.zygote numpy" in artifact["stdout"] and "jobguard" not in artifact["stdout"]


@pytest.mark.sphinx
def test_torch_jobs_are_deterministic_without_importing_inductor_and_inductor_agrees(tmp_path: Path) -> None:
    """Seeding switches deterministic algorithms on without the seconds of importing Inductor; code
    that imports it later (torch.compile) still finds Inductor's deterministic flag set."""
    src = make_project(tmp_path / "src", {"det": heatmap_page(DETERMINISM, "Deterministic", ":backend: torch")})
    assert run_sphinx(src, "html").summary == (1, 0, 0)
    ((artifact,),) = [list(load_artifacts(src).values())]
    assert artifact["data"]["values"] == [[1.0, 0.0, 1.0]]


def test_the_pool_falls_back_where_it_cannot_keep_its_guarantees() -> None:
    assert pool_problem(True, "") is None
    assert "off" in (pool_problem(False, "") or "")
    assert "forked child" in (pool_problem(True, "bwrap") or "")


@pytest.mark.sphinx
def test_status_times_lists_the_slowest_figures_first(pooled: tuple[Path, Build], capsys) -> None:  # noqa: ANN001
    from sphinx_tensorviz.cli import main

    src, _ = pooled
    assert main(["status", "--times", "--json", str(src)]) == 0
    times = json.loads(capsys.readouterr().out)["times"]
    assert len(times) == 5
    seconds = [t["seconds"] for t in times]
    assert seconds == sorted(seconds, reverse=True)
    stored = {h: a["execution"]["seconds"] for h, a in load_artifacts(src).items()}
    assert {t["contentHash"]: t["seconds"] for t in times} == stored
    assert main(["status", "--times", str(src)]) == 0
    out = capsys.readouterr().out
    assert "peak MiB" in out and "5 executed figures with recorded times" in out


@pytest.mark.sphinx
def test_a_library_the_jobs_import_is_imported_once_by_their_warm_parent(tmp_path: Path) -> None:
    """``import transformers`` in the code: the torch parent imports it before forking, so the
    child finds it loaded; a page without it leaves the parent without it."""
    code = "import sys\nloaded = 'transformers' in sys.modules\nimport transformers\nresult = [[float(loaded)]]"
    src = make_project(tmp_path / "src", {"hf": heatmap_page(code, "HF", ":backend: torch")})
    assert run_sphinx(src, "html").summary == (1, 0, 0)
    ((artifact,),) = [list(load_artifacts(src).values())]
    assert artifact["data"]["values"] == [[1.0]]
    plain = "import sys\nresult = [[float('transformers' in sys.modules)]]"
    other = make_project(tmp_path / "other", {"plain": heatmap_page(plain, "Plain", ":backend: torch")})
    assert run_sphinx(other, "html").summary == (1, 0, 0)
    ((artifact,),) = [list(load_artifacts(other).values())]
    assert artifact["data"]["values"] == [[0.0]]
