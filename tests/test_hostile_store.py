"""Issue 13, cases 1 and 5 and the file modes: the store survives, and lesson code cannot use it.

Real builds: a store that cannot be written (figures are drawn from memory with a located
warning, exit 0); lesson code that writes junk and a forged artifact for another page into the
store (set aside, never read); lesson code that looks for the build's secrets in its
environment and for the source folder in its working directory; files written 0644.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Build, artifact_files, load_artifacts, run_sphinx, snapshot, store_dir
from hostile_util import assert_store_valid, heatmap_page, located, make_project, no_warnings_for, nothing_left_behind
from sphinx_tensorviz.core.hashing import digest

pytestmark = pytest.mark.sphinx

FIRST = heatmap_page("import numpy as np\n\nresult = np.array([[1.0, 2.0], [3.0, 4.0]])", "First")
SECOND = heatmap_page("import numpy as np\n\nresult = np.array([[5.0, 6.0], [7.0, 8.0]])", "Second")
BROKEN = heatmap_page("raise ValueError('broken on purpose')", "Broken")


# ------------------------------------------------------------------------------------------------
# case 1: a store that cannot be written
# ------------------------------------------------------------------------------------------------
def _freeze(folder: Path) -> bool:
    """Make ``folder`` unwritable, even for root (``chattr +i``); ``False`` if this system cannot."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return True
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0


def _thaw(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    else:
        folder.chmod(0o755)


@pytest.fixture(params=["with-failures-folder", "artifacts-only"])
def frozen_store(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A project built once (one artifact stored), whose store is then unwritable: with its local
    ``failures/`` folder (also unwritable), or as committed (artifacts only, no lock file)."""
    src = make_project(tmp_path / "src", {"first": FIRST})
    assert run_sphinx(src).statuscode == 0
    folders = [store_dir(src), store_dir(src) / "failures"]
    if request.param == "artifacts-only":
        shutil.rmtree(folders.pop())
    frozen = [f for f in folders if _freeze(f)]
    if len(frozen) != len(folders):
        for folder in frozen:
            _thaw(folder)
        pytest.skip("cannot make a folder unwritable for root here (no chattr +i on this file system)")
    try:
        yield src
    finally:
        for folder in frozen:
            _thaw(folder)


def test_an_unwritable_store_draws_new_figures_from_memory(frozen_store: Path) -> None:
    src = frozen_store
    before = snapshot(src)
    (src / "second.md").write_text(SECOND, "utf-8")
    (src / "broken.md").write_text(BROKEN, "utf-8")
    (src / "index.md").write_text("# Hostile\n\n```{toctree}\nfirst\nsecond\nbroken\n```\n", "utf-8")
    build = run_sphinx(src)
    assert build.statuscode == 0, build.warnings
    # the build's own: broken.md's warning shows the lesson's, "Traceback (your code first, ...)"
    assert "Traceback (most recent call last)" not in build.warnings + build.status
    located(build, src, "second", "store", "cannot write to the artifact store", "shown from memory",
            "not stored")
    page = build.html("second")
    assert "<svg" in page and ">8<" in page  # the new figure, with its values, from memory
    no_warnings_for(build, src, "first")  # the stored one is drawn from the store as before
    assert "<svg" in build.html("first")
    records = [r for r in build.tensorviz_warnings() if str(src / "broken.md") in r]
    assert any("[tensorviz.execution]" in r and "broken on purpose" in r for r in records), records
    assert any("[tensorviz.store]" in r and "failure record" in r for r in records), records
    assert "broken on purpose" in build.html("broken")
    assert snapshot(src) == before  # nothing was written, nothing half-written
    assert not [w for w in build.tensorviz_warnings() if "cannot check" in w]
    assert_store_valid(src)
    nothing_left_behind()


# ------------------------------------------------------------------------------------------------
# case 5: lesson code that writes into the store
# ------------------------------------------------------------------------------------------------
def _attacker(store: Path, forged: Path, victim: str) -> str:
    """Lesson code that writes junk, a non-artifact, a forged artifact of another page and a failure record."""
    return heatmap_page(
        "import pathlib\nimport numpy as np\n\n"
        f"store = pathlib.Path({str(store)!r})\n"
        "(store / 'junk.txt').write_text('junk')\n"
        f"(store / '{'0' * 64}.json').write_text('{{}}')\n"
        f"(store / '{victim}.json').write_text(pathlib.Path({str(forged)!r}).read_text())\n"
        "(store / 'failures' / 'x.json').write_text('{}')\n"
        "result = np.eye(2)", "Attacker")


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build, str]:
    """Build the victim once; delete its artifact; build again with an attacker page that forges it."""
    src = make_project(tmp_path_factory.mktemp("tamper") / "src", {"a_victim": SECOND}, "tensorviz_workers = 1\n")
    assert run_sphinx(src).statuscode == 0
    (victim_hash,) = artifact_files(src)
    forged = json.loads(artifact_files(src)[victim_hash].read_text("utf-8"))
    forged["data"]["values"] = [[666.5, 666.5], [666.5, 666.5]]  # a valid artifact: the request still hashes right
    assert digest(forged["request"]) == victim_hash
    artifact_files(src)[victim_hash].unlink()
    forged_file = src.parent / "forged.json"
    forged_file.write_text(json.dumps(forged, indent=2), "utf-8")
    (src / "z_attacker.md").write_text(_attacker(store_dir(src), forged_file, victim_hash), "utf-8")
    (src / "index.md").write_text("# Hostile\n\n```{toctree}\na_victim\nz_attacker\n```\n", "utf-8")
    return src, run_sphinx(src), victim_hash


def test_files_written_into_the_store_are_set_aside_with_a_located_warning(
        tampered: tuple[Path, Build, str]) -> None:
    src, build, victim_hash = tampered
    assert build.statuscode == 0, build.warnings
    records = [r for r in build.tensorviz_warnings() if "[tensorviz.store]" in r]
    for name in ("junk.txt", f"{'0' * 64}.json", f"{victim_hash}.json", "failures/x.json"):
        assert any(f"{name} (new) was not written by a build" in r for r in records), (name, records)
    assert all(r.startswith(f"{src / 'z_attacker.md'}:") for r in records), records
    quarantined = {p.name for p in (store_dir(src) / "failures" / "quarantine").rglob("*") if p.is_file()}
    assert {"junk.txt", f"{victim_hash}.json", "x.json"} <= quarantined


def test_a_forged_artifact_is_never_drawn(tampered: tuple[Path, Build, str]) -> None:
    src, build, victim_hash = tampered
    page = build.html("a_victim")
    assert ">8<" in page and "666.5" not in page  # (hex hashes on the page hold no ".")
    assert load_artifacts(src)[victim_hash]["data"]["values"] == [[5.0, 6.0], [7.0, 8.0]]
    assert_store_valid(src)
    nothing_left_behind()


def test_a_concurrent_writer_through_the_store_is_not_mistaken_for_lesson_code(tmp_path: Path) -> None:
    """Writes that go through the store (another build, ``tensorviz execute``) are in its ledger."""
    from sphinx_tensorviz.store.artifacts import ArtifactStore
    from sphinx_tensorviz.store.guard import list_store, set_aside_intruders

    src = make_project(tmp_path / "src", {"first": FIRST})
    assert run_sphinx(src).statuscode == 0
    store = ArtifactStore(store_dir(src))
    before = list_store(store)
    (artifact_hash,) = artifact_files(src)
    artifact = json.loads(artifact_files(src)[artifact_hash].read_text("utf-8"))
    store.delete_artifact(artifact_hash)
    store.write_artifact({**artifact, "generatedAt": "2030-01-01T00:00:00+00:00"})  # as a concurrent build would
    store.write_failure("f" * 64, {"subtype": "execution", "message": "m"})
    with store.lock():
        assert set_aside_intruders(store, before) == []
    (store.root / "sneaky.json").write_text("{}")
    with store.lock():
        assert [i.name for i in set_aside_intruders(store, before)] == ["sneaky.json"]


# ------------------------------------------------------------------------------------------------
# the worker's environment and folder; file modes
# ------------------------------------------------------------------------------------------------
SNOOP = heatmap_page(
    "import os\nimport numpy as np\n\n"
    "print('ENV', sorted(os.environ))\n"
    "print('SECRET', os.environ.get('TENSORVIZ_SECRET'), os.environ.get('PYTHONSTARTUP'))\n"
    "print('CWD', os.getcwd())\n"
    "print('TMP', __import__('tempfile').gettempdir())\n"
    "print('LISTING', sorted(os.listdir('.')))\n"
    "open('left-behind.txt', 'w').write('x')\n"
    "result = np.eye(2)", "Snoop")


@pytest.fixture(scope="module")
def snooped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Build, str]]:
    src = make_project(tmp_path_factory.mktemp("env") / "src", {"snoop": SNOOP, "broken": BROKEN})
    startup = src.parent / "startup.py"
    startup.write_text("print('STARTUP RAN')\n")
    saved = {k: os.environ.get(k) for k in ("TENSORVIZ_SECRET", "PYTHONSTARTUP", "XLA_FLAGS", "OMP_PROC_BIND")}
    os.environ.update(TENSORVIZ_SECRET="hunter2-secret", PYTHONSTARTUP=str(startup), OMP_PROC_BIND="false")
    try:
        build = run_sphinx(src)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    (artifact,) = [a for a in load_artifacts(src).values() if "SECRET" in a["stdout"]]
    yield src, build, artifact["stdout"]


def test_the_builds_secrets_stay_behind(snooped: tuple[Path, Build, str]) -> None:
    src, build, stdout = snooped
    assert build.statuscode == 0, build.warnings
    assert "hunter2-secret" not in stdout and "hunter2-secret" not in build.html("snoop")
    assert "SECRET None None" in stdout
    assert "STARTUP RAN" not in stdout
    assert "'OMP_PROC_BIND'" in stdout  # what the frameworks read is still passed on
    assert "'TENSORVIZ_SECRET'" not in stdout


def test_the_worker_runs_in_a_private_folder_that_is_removed(snooped: tuple[Path, Build, str]) -> None:
    src, build, stdout = snooped
    cwd = next(line for line in stdout.splitlines() if line.startswith("CWD ")).split(" ", 1)[1]
    tmp = next(line for line in stdout.splitlines() if line.startswith("TMP ")).split(" ", 1)[1]
    assert Path(cwd).name == "work" and Path(cwd).parent.name.startswith(f"tensorviz-job-{os.getpid()}-")
    assert Path(tmp).parent == Path(cwd).parent
    assert Path(cwd).parent.parent == Path(tempfile.gettempdir())
    assert "LISTING []" in stdout  # not the source folder
    assert not Path(cwd).parent.exists()
    assert not (src / "left-behind.txt").exists()
    nothing_left_behind()


def test_artifacts_and_failure_records_are_readable_by_others(snooped: tuple[Path, Build, str]) -> None:
    src, _, _ = snooped
    files = list(artifact_files(src).values()) + list((store_dir(src) / "failures").glob("*.json"))
    assert len(files) == 2  # the artifact of "snoop" and the failure of "broken"
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, (path.name, oct(path.stat().st_mode))


def test_two_concurrent_builds_are_not_mistaken_for_lesson_code(tmp_path: Path) -> None:
    """Two real builds of one project at the same time, on a cold store: each sees the other's
    writes appear while its own jobs run; the ledger tells them apart from intruders."""
    import sys

    pages = {f"p{n}": heatmap_page(f"import time\nimport numpy as np\n\ntime.sleep(0.3)\nresult = np.eye({n + 2})",
                                   f"Page {n}") for n in range(6)}
    src = make_project(tmp_path / "src", pages)
    builds = [subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", "-d", str(tmp_path / f"d{n}"),
                                str(src), str(tmp_path / f"out{n}")], stderr=subprocess.PIPE, text=True)
              for n in range(2)]
    for build in builds:
        _, errors = build.communicate(timeout=300)
        assert build.returncode == 0, errors
        assert "[tensorviz." not in errors, errors
    assert len(artifact_files(src)) == 6
    assert not (store_dir(src) / "failures" / "quarantine").exists()
    assert_store_valid(src)
    nothing_left_behind()


# ------------------------------------------------------------------------------------------------
# issue 24, points 23 and 26: store entries that are not regular files, and corrupt artifacts
# ------------------------------------------------------------------------------------------------
def _build_in_subprocess(src: Path, timeout: float = 240, *options: str) -> subprocess.CompletedProcess[str]:
    """A real ``sphinx-build`` in its own process, under a 4 GiB address-space limit and a timeout,
    so a store that would be read without end fails this test instead of the test run."""
    import resource
    import sys

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", *options, str(src), str(src / "_build")],
                          capture_output=True, text=True, timeout=timeout, preexec_fn=limit_memory)


def _located_in(stderr: str, src: Path, page: str, subtype: str) -> list[str]:
    """The ``[tensorviz.<subtype>]`` warnings of a subprocess build located at ``page``'s directive line."""
    from conftest import directive_lines, warning_records

    prefix = f"{src / page}.md:{directive_lines(src / f'{page}.md')[0]}: WARNING:"
    return [r for r in warning_records(stderr) if r.startswith(prefix) and f"[tensorviz.{subtype}]" in r]


@pytest.mark.parametrize("entry", ["symlink-to-dev-zero", "fifo", "folder"])
def test_a_store_entry_that_is_not_a_regular_file_is_refused_and_replaced(tmp_path: Path, entry: str) -> None:
    """An artifact and a failure record replaced by a symlink to ``/dev/zero`` (read whole, it never
    ends) or by a FIFO (opened for reading, it waits for a writer for ever): the build reads neither,
    warns at each figure, runs both again and stores regular files in their place. A folder of that
    name is refused unread and replaced too."""
    src = make_project(tmp_path / "src", {"first": FIRST, "broken": BROKEN})
    first = _build_in_subprocess(src)
    assert first.returncode == 0, first.stderr
    (artifact_hash,) = artifact_files(src)
    (failure,) = (store_dir(src) / "failures").glob("*.json")
    for path in (artifact_files(src)[artifact_hash], failure):
        path.unlink()
        if entry == "fifo":
            os.mkfifo(path)
        elif entry == "folder":  # a rename cannot replace a folder: the result used to be never stored
            path.mkdir()
            (path / "inside").write_text("x")
        else:
            path.symlink_to("/dev/zero")
    again = _build_in_subprocess(src)  # before the fix: a MemoryError traceback, or a hang until the timeout
    assert again.returncode == 0, again.stderr
    assert "Traceback (most recent call last)" not in again.stderr  # the build's own (broken.md's is the lesson's)
    for page, what in (("first", "stored artifact"), ("broken", "failure record")):
        (warning,) = _located_in(again.stderr, src, page, "store")
        assert what in warning and "not a regular file" in warning, warning
    assert any("broken on purpose" in w for w in _located_in(again.stderr, src, "broken", "execution"))
    assert ">4<" in (src / "_build" / "first.html").read_text("utf-8")
    for path in (artifact_files(src)[artifact_hash], failure):
        assert stat.S_ISREG(os.lstat(path).st_mode), path  # replaced by the new result, atomically
    assert_store_valid(src)
    nothing_left_behind()


@pytest.mark.parametrize("junk", [bytes(range(256)) * 12, b'{"contentHash": "trunc'])
def test_a_corrupt_artifact_is_a_miss_and_is_replaced_by_the_new_result(tmp_path: Path, junk: bytes) -> None:
    """``head -c3000 /dev/urandom > <hash>.json`` (not UTF-8), or a truncated JSON file: the figure runs
    again, its result replaces the file, and no failure is recorded against the lesson."""
    src = make_project(tmp_path / "src", {"first": FIRST})
    assert run_sphinx(src).statuscode == 0
    (path,) = artifact_files(src).values()
    path.write_bytes(junk)
    repaired = run_sphinx(src)
    assert repaired.statuscode == 0, repaired.warnings
    assert repaired.summary == (1, 0, 0)
    located(repaired, src, "first", "store", "is not valid JSON", "executing again")
    assert [w for w in repaired.tensorviz_warnings() if "[tensorviz.store]" not in w] == []
    assert list((store_dir(src) / "failures").glob("*.json")) == []
    assert ">4<" in repaired.html("first")
    assert_store_valid(src)
    clean = run_sphinx(src)
    assert clean.summary == (0, 1, 0) and clean.tensorviz_warnings() == []


def test_a_recorded_truncation_warns_again_on_a_cached_rebuild(tmp_path: Path) -> None:
    """The stdout-truncation warning is part of the result: a cached rebuild under ``-W`` (nothing runs,
    no page is read again) repeats it at the figure and fails like the build that executed it."""
    chatty = heatmap_page("import numpy as np\n\nprint('x' * 5000)\nresult = np.eye(2)", "Chatty")
    src = make_project(tmp_path / "src", {"chatty": chatty}, "tensorviz_max_stdout_kb = 1\n")
    builds = [_build_in_subprocess(src, 240, "-W") for _ in range(2)]
    for n, built in enumerate(builds):
        assert built.returncode == 1, (n, built.stderr)  # -W: the warning fails both builds
        (warning,) = _located_in(built.stderr, src, "chatty", "limit")
        assert "only the last 1 KB are kept (tensorviz_max_stdout_kb)" in warning, (n, warning)
    (artifact,) = load_artifacts(src).values()
    assert any("tensorviz_max_stdout_kb" in note for note in artifact["notes"])
    assert len(artifact_files(src)) == 1 and "[tensorviz.execution]" not in builds[1].stderr


#: JSON nested deeper than Python's parser recurses: valid UTF-8, but json.loads raises RecursionError
NESTED = "[" * 100_000 + "]" * 100_000

FORGED_RESULT = heatmap_page('''\
import os, pathlib

# the worker's result file, written by the lesson itself, which then leaves before the worker writes one
pathlib.Path(os.environ["TMPDIR"]).parent.joinpath("result.json").write_text("[" * 100_000 + "]" * 100_000)
os._exit(0)
''', "Forged")


@pytest.mark.parametrize("pool", [True, False], ids=["pool", "fresh"])
def test_json_nested_too_deep_to_parse_is_refused_not_a_crash(tmp_path: Path, pool: bool) -> None:
    """A stored artifact and a failure record of deeply nested JSON (a shared store's, or lesson code's),
    and a worker result file forged that way by lesson code: each is a located warning (a corrupt
    artifact is a miss, executed again and replaced), never the build's RecursionError traceback."""
    src = make_project(tmp_path / "src", {"first": FIRST, "broken": BROKEN, "forged": FORGED_RESULT},
                       f"tensorviz_worker_pool = {pool}\n")
    assert _build_in_subprocess(src).returncode == 0
    (artifact,) = [p for p in artifact_files(src).values()]
    (failure,) = [p for p in (store_dir(src) / "failures").glob("*.json")
                  if "broken on purpose" in p.read_text("utf-8")]
    for path in (artifact, failure):
        path.write_text(NESTED, "utf-8")
    again = _build_in_subprocess(src)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Traceback (most recent call last)" not in again.stderr and "RecursionError" not in again.stderr
    assert _located_in(again.stderr, src, "first", "store"), again.stderr  # the corrupt artifact: a miss
    assert ">4<" in (src / "_build" / "first.html").read_text("utf-8")
    assert json.loads(artifact.read_text("utf-8"))["data"]["values"] == [[1.0, 2.0], [3.0, 4.0]]  # replaced
    assert any("broken on purpose" in w for w in _located_in(again.stderr, src, "broken", "execution"))
    assert _located_in(again.stderr, src, "forged", "crash"), again.stderr
    assert_store_valid(src)
    nothing_left_behind()
