"""Issue 13, case 5 in the sandbox: with ``tensorviz_sandbox = "bwrap"`` lesson code cannot read the
home folder, write the source or the store, or reach the network; and where bubblewrap cannot run,
the build says so and executes nothing.

Real builds with real bubblewrap; the sandbox tests skip (saying why) where bubblewrap is missing or
cannot create namespaces (e.g. a container without unprivileged user namespaces). ``.ci/setup``
installs it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
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


# ------------------------------------------------------------------------------------------------
# issue 24, point 20: what the sandbox mounts. Five ways a build's secrets used to reach the page,
# each built by a real ``python -m sphinx``, as root and as a normal user (``nobody``).
# ------------------------------------------------------------------------------------------------
SECRET = f"TV-SECRET-{os.getpid()}-4f1c"
NOBODY = 65534
SECRET_FILES = (".aws/credentials", ".env", "projects/.env")  #: under the home folder; the course is
COURSE = "projects/course"  #: beside ``projects/.env``, as an author keeps a course in their home

LEAK = '''\
import pathlib
import numpy as np

for path in {paths!r}:
    try:
        print("READ", path, pathlib.Path(path).read_text())
    except Exception as exc:
        print("DENIED", path, type(exc).__name__)
result = np.eye(2)
'''

#: case -> (working folder, PYTHONPATH, lines added to conf.py), relative to the home folder
CASES = {
    "etc-shadow": (None, None, ""),  # a plain build: root used to read /etc/shadow inside
    "cwd-is-home": (".", None, ""),  # `python -m sphinx` from the home folder puts it on sys.path
    "pythonpath-home": (None, ".", ""),
    "pythonpath-under-home": (None, "projects", ""),  # holds the course and the .env beside it
    "pythonpath-etc": (None, "/etc", ""),  # a system folder of secrets (/etc/shadow, ssl/private) on PYTHONPATH
    "conf-inserts-parent": (None, None, "import sys, pathlib\n"
                                        "sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))\n"),
}


AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
#: what ``nobody`` runs to check it can build: the interpreter, found as the build finds its workers'
CAN_BUILD = "import shutil, sys, sphinx_tensorviz, sphinx, numpy; assert shutil.which(sys.executable)"


@pytest.fixture(scope="module")
def nobody_python() -> Iterator[tuple[str, dict[str, str]]]:
    """An interpreter ``nobody`` can run, with the environment it needs: this one, or, where this one
    lives in a folder only root may enter (pyenv under ``/root``), a copy of its base installation in a
    world-readable folder whose site-packages loads this one's (the packages and the editable
    install). The build, its workers and the sandbox then use that copy as they would any Python."""
    if os.geteuid() != 0:
        pytest.skip("the tests do not run as root, so they cannot switch to another user")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    if PROBLEM:
        pytest.skip(f"the bwrap sandbox cannot run here: {PROBLEM}")
    if subprocess.run([*AS_NOBODY, sys.executable, "-c", CAN_BUILD], capture_output=True).returncode == 0:
        yield sys.executable, {}
        return
    copy = Path(tempfile.mkdtemp(prefix="tv-nobody-python-"))
    try:
        yield _world_readable_python(copy)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _world_readable_python(copy: Path) -> tuple[str, dict[str, str]]:
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    skip = shutil.ignore_patterns("site-packages", "test", "__pycache__", "idlelib", "tkinter", "ensurepip")
    shutil.copytree(base / "lib" / version, copy / "lib" / version, ignore=skip, symlinks=True)
    for library in (base / "lib").glob("libpython*"):
        shutil.copy2(library, copy / "lib", follow_symlinks=False)
    (copy / "bin").mkdir()
    shutil.copy2(Path(sys.base_prefix, "bin", version), copy / "bin" / version)
    packages = copy / "lib" / version / "site-packages"
    packages.mkdir()
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_relative_to(sys.prefix)]
    (packages / "tensorviz-test.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
    for path in [copy, *copy.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)
    env = {"LD_LIBRARY_PATH": str(copy / "lib")}  # its RUNPATH names the original, under /root
    python = str(copy / "bin" / version)
    probe = subprocess.run([*AS_NOBODY, python, "-c", CAN_BUILD], capture_output=True, text=True,
                           env={**os.environ, **env})
    if probe.returncode:
        pytest.skip(f"nobody cannot run a copy of this Python: {probe.stderr.strip()[-300:]}")
    return python, env


def _leak_build(base: Path, case: str, python: str, user_env: dict[str, str] | None
                ) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """A course at ``~/projects/course`` with secrets around it, built in case ``case`` by root
    (``user_env`` ``None``) or by ``nobody`` (with ``python`` and ``user_env``)."""
    base.chmod(0o755)
    home = base / "home"
    for name in SECRET_FILES:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"{SECRET}\n")
        (home / name).chmod(0o600)
    cwd, pythonpath, conf = CASES[case]
    paths = ["/etc/shadow", *(str(home / name) for name in SECRET_FILES)]
    src = make_project(home / COURSE, {"probe": heatmap_page(LEAK.format(paths=paths), "Probe")},
                       f'tensorviz_sandbox = "bwrap"\n{conf}')
    out = base / "out"
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **(user_env or {})}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(home / pythonpath)
    command = [python, "-m", "sphinx", "-b", "html", str(src), str(out)]
    if user_env is not None:
        for path in [base, *base.rglob("*")]:
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        command = [*AS_NOBODY, *command]
    built = subprocess.run(command, cwd=home / cwd if cwd else base, env=env, capture_output=True, text=True,
                           timeout=300)
    return src, out, built


@needs_bwrap
@pytest.mark.parametrize("user", ["root", "nobody"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_secret_of_the_build_machine_reaches_the_sandbox(request: pytest.FixtureRequest, case: str,
                                                           user: str) -> None:
    """The job still runs (site-packages and the course are there), every secret is denied, and the
    secret is in no artifact, failure record, page or output of the build."""
    if user == "root" and os.geteuid() != 0:
        pytest.skip("the tests do not run as root")
    python, user_env = request.getfixturevalue("nobody_python") if user == "nobody" else (sys.executable, None)
    base = Path(tempfile.mkdtemp(prefix="tv-leak-"))  # not under pytest's folder, which only root may enter
    try:
        src, out, built = _leak_build(base, case, python, user_env)
        assert built.returncode == 0, built.stderr
        (artifact,) = load_artifacts(src).values()
        lines = artifact["stdout"].splitlines()
        assert len([line for line in lines if line.startswith("DENIED ")]) == 1 + len(SECRET_FILES), lines
        everything = built.stdout + built.stderr + "".join(
            p.read_text("utf-8", "replace") for folder in (store_dir(src), out) for p in folder.rglob("*")
            if p.is_file())
        assert SECRET not in everything
        assert "READ /etc/shadow" not in everything
        if CASES[case][1] is not None:  # a PYTHONPATH entry that would expose the home folder or the course's
            warning = [w for w in built.stderr.splitlines() if "[tensorviz.config]" in w]
            assert len(warning) == 1 and f"{src / 'probe.md'}:" in warning[0], built.stderr
            assert str(base / "home" / CASES[case][1]).rstrip("/.") in warning[0], warning
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ------------------------------------------------------------------------------------------------
# issue 24, point 28: the sandbox's memory in files, and the build's environment seen from a worker
# ------------------------------------------------------------------------------------------------
FILL = '''\
import os

def fill(path, mib=96):
    """Write ``mib`` MiB to ``path``; say how far it got."""
    done = 0
    try:
        with open(path, "wb") as handle:
            for _ in range(mib):
                handle.write(bytes(1 << 20))
                handle.flush()
                done += 1
        print("FILL", path, "wrote", done)
    except OSError as exc:
        print("FILL", path, "stopped", done, exc.errno)
    finally:
        if os.path.exists(path):
            os.remove(path)

for path in ("/tmp/fill", "/dev/shm/fill", "/fill", "/dev/fill"):
    fill(path)
result = [[1.0]]
'''


@needs_bwrap
def test_the_sandbox_bounds_its_memory_backed_folders_by_the_memory_limit(tmp_path: Path) -> None:
    """Files in the sandbox's /tmp and /dev/shm are host memory: bounded by tensorviz_memory_limit_mb
    (here 64 MiB, the code writes 96); / and /dev, bwrap's own tmpfs mounts, take nothing."""
    src = make_project(tmp_path / "src", {"fill": heatmap_page(FILL, "Fill")},
                       'tensorviz_sandbox = "bwrap"\ntensorviz_memory_limit_mb = 64\n')
    build = run_sphinx(src)
    assert build.statuscode == 0 and not build.tensorviz_warnings(), build.warnings
    (artifact,) = load_artifacts(src).values()
    said = {line.split()[1]: line.split()[2:] for line in artifact["stdout"].splitlines() if line.startswith("FILL ")}
    for bounded in ("/tmp/fill", "/dev/shm/fill"):
        assert said[bounded][0] == "stopped", said  # it used to write all 96 MiB
        assert int(said[bounded][1]) <= 64 and said[bounded][2] == "28", said  # ENOSPC at the limit
    for read_only in ("/fill", "/dev/fill"):
        assert said[read_only] == ["stopped", "0", "30"], said  # EROFS
    nothing_left_behind()


ENVIRON = '''\
import os, pathlib

def parent(pid):
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2:].split()[1])

def holds_secret(pid):
    try:
        return b"TV_BUILD_SECRET=" in pathlib.Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False

print("PARENT", os.getppid(), holds_secret(os.getppid()))
pid, holders = os.getppid(), []
while pid > 1:
    if holds_secret(pid):
        holders.append(pid)
    try:
        pid = parent(pid)
    except (OSError, ValueError):
        break
print("HOLDERS", *holders)
print("SEEN", len(list(pathlib.Path("/proc").iterdir())))
result = [[1.0]]
'''


@pytest.mark.parametrize("mode", ["pool", "fresh", "bwrap"])
def test_what_a_worker_can_read_of_the_builds_environment(tmp_path: Path, mode: str) -> None:
    """What what-runs-where.md says: the worker's own environment and its parent's (the job guard,
    the pool's parent) hold none of the build's variables; in the default mode the build's own
    /proc/<pid>/environ is still readable by walking up, in the sandbox nothing above it is visible."""
    if mode == "bwrap" and PROBLEM:
        pytest.skip(f"the bwrap sandbox cannot run here: {PROBLEM}")
    conf = {"pool": "", "fresh": "tensorviz_worker_pool = False\n", "bwrap": 'tensorviz_sandbox = "bwrap"\n'}[mode]
    src = make_project(tmp_path / "src", {"env": heatmap_page(ENVIRON, "Environ")}, conf)
    env = {**os.environ, "TV_BUILD_SECRET": "ci-token-value"}
    build = subprocess.Popen([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, stderr = build.communicate(timeout=300)
    assert build.returncode == 0, stderr
    (artifact,) = load_artifacts(src).values()
    lines = {line.split()[0]: line.split()[1:] for line in artifact["stdout"].splitlines()}
    assert lines["PARENT"][1] == "False", lines  # the direct parent's environment is scrubbed
    assert "TV_BUILD_SECRET" not in artifact.get("environment", {}).__repr__()
    holders = [int(pid) for pid in lines["HOLDERS"]]
    assert holders == ([] if mode == "bwrap" else [build.pid]), (holders, build.pid)
    nothing_left_behind()


SCAN_PROC = '''\
import pathlib

seen, holders = [], []
for entry in pathlib.Path("/proc").iterdir():
    try:
        if entry.name.isdigit() and b"sphinx\\0-q\\0-b" in (entry / "cmdline").read_bytes():
            seen.append(entry.name)  # the build: python -m sphinx -q -b html ...
        if entry.name.isdigit() and b"TV_BUILD_SECRET=" in (entry / "environ").read_bytes():
            holders.append(entry.name)
    except OSError:
        pass
print("BUILD", *seen)
print("HOLDERS", *holders)
result = [[1.0]]
'''


@needs_bwrap
def test_a_system_folder_on_pythonpath_does_not_bring_the_hosts_proc_into_the_sandbox(tmp_path: Path) -> None:
    """``PYTHONPATH=/proc`` (or ``/etc``, ``/run``, ``/var``): mounted read-only like any other sys.path
    folder, the host's ``/proc`` would replace the sandbox's own, and every environment of the build's
    user would be readable, and every process's command line. It is left out, with a located warning:
    the lesson sees neither the build's process nor its variables."""
    src = make_project(tmp_path / "src", {"env": heatmap_page(SCAN_PROC, "Proc")},
                       'tensorviz_sandbox = "bwrap"\n')
    env = {**os.environ, "TV_BUILD_SECRET": "ci-token-value", "PYTHONPATH": "/proc"}
    build = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                           env=env, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    (artifact,) = load_artifacts(src).values()
    assert artifact["stdout"].splitlines() == ["BUILD", "HOLDERS"], artifact["stdout"]
    warning = [w for w in build.stderr.splitlines() if "[tensorviz.config]" in w]
    assert len(warning) == 1 and f"{src / 'env.md'}:" in warning[0] and "/proc" in warning[0], build.stderr
    nothing_left_behind()


GIT_PROBE = '''\
import pathlib
import numpy as np

course = pathlib.Path(__file__).resolve().parent
for path in (course / ".git" / "config", *sorted((course / ".git").rglob("*"))[:50]):
    try:
        text = path.read_text(errors="replace")
        print("READ", path.name, "SECRET" if {secret!r} in text else "")
    except Exception as exc:
        print("DENIED", path.name, type(exc).__name__)
print("SOURCE", (course / "conf.py").is_file())
result = np.eye(2)
'''


@needs_bwrap
def test_the_courses_git_folder_and_its_ci_token_stay_out_of_the_sandbox(tmp_path: Path) -> None:
    """A CI checkout (GitHub's actions/checkout) leaves its token in ``.git/config``
    (``http.<url>.extraheader AUTHORIZATION: basic ...``), and the tutorial's course is the repository's
    root, so the sandbox mounted it with the course. The course stays readable; its ``.git`` does not."""
    secret = f"ci-token-{os.getpid()}"
    src = make_project(tmp_path / "src", {"probe": heatmap_page(GIT_PROBE.format(secret=secret), "Git")},
                       'tensorviz_sandbox = "bwrap"\n')
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    subprocess.run(["git", "-C", str(src), "config", "http.https://github.com/.extraheader",
                    f"AUTHORIZATION: basic {secret}"], check=True)
    build = run_sphinx(src)
    assert build.statuscode == 0, build.warnings
    (artifact,) = load_artifacts(src).values()
    assert secret not in artifact["stdout"] and "SECRET" not in artifact["stdout"], artifact["stdout"]
    assert "SOURCE True" in artifact["stdout"], artifact["stdout"]  # the course itself is still there
    assert "READ config" not in artifact["stdout"], artifact["stdout"]
    nothing_left_behind()
