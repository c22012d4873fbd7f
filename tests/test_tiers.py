"""The test tiers stay honest: a test that builds Sphinx carries the ``sphinx`` mark.

The fast tier (``pytest -m "not sphinx and not browser and not execution"``) is only fast, and
only says what it covers, if every test that builds a Sphinx project is marked ``sphinx``. The
source check runs here in the fast tier, for every test module (skipped tests included); the
run-time guard (:class:`tiers_util.TierGuard`) is checked by running a small test session
of its own, once without and once with the mark.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tiers_util import FAST_TIER, TESTS, Module, Sources, has_mark, sphinx_command, unmarked_builders

ROOT = TESTS.parent


def test_every_test_that_builds_sphinx_is_marked() -> None:
    found = unmarked_builders()
    assert not found, "add pytest.mark.sphinx (or a module pytestmark) to:\n" + "\n".join(map(str, found))


def test_the_markers_are_declared_with_a_description() -> None:
    """``--strict-markers`` would refuse an undeclared one; a description tells contributors what it means."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["pytest"]["ini_options"]["markers"]
    names = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in declared}
    assert {"sphinx", "browser", "execution"} <= set(names)
    assert all(names.values())


def test_the_readme_gives_the_fast_tier_and_keeps_the_one_command_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert f'-m pytest -m "{FAST_TIER}"' in readme
    assert "bash .ci/setup && .venv/bin/python -m pytest\n" in readme
    assert "bash .ci/setup && .venv/bin/python -m pytest\n" in (ROOT / ".ci" / "run").read_text("utf-8")


def test_every_browser_test_module_is_marked_browser() -> None:
    """A module that opens Chromium (the ``browser`` fixture or ``browser_util``'s pages) is marked."""
    for path in sorted(TESTS.glob("test_*.py")):
        module = Module.read(path)
        uses = "browser_util" in {m for m, _ in module.imports.values()} or any(
            "browser" in [a.arg for a in f.args.args] for f in module.functions.values())
        if not uses:
            continue
        pytestmark = module.assigned.get("pytestmark")
        assert pytestmark is not None and has_mark(pytestmark, "browser"), path.name


# -- the source check finds what it must, and only that ---------------------------------

HELPER = '''
from conftest import run_sphinx

def build_twice(src):
    run_sphinx(src)
    return run_sphinx(src)
'''

CASES = '''
import subprocess, sys
import pytest
from conftest import run_sphinx
from helper_mod import build_twice
from sphinx_tensorviz.cli import main

SCRIPT = "from sphinx.cmd.build import main; main()"
DERIVED = SCRIPT.replace("main()", "main(sys.argv[1:])")

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    return run_sphinx(tmp_path_factory.mktemp("x"))

@pytest.fixture
def on_site(site):
    return site

def helper(src):
    return build_twice(src)

def test_direct(tmp_path):
    run_sphinx(tmp_path)

def test_through_two_fixtures(on_site):
    pass

def test_through_an_imported_helper(tmp_path):
    helper(tmp_path)

def test_the_build_fixture(build, tmp_path):
    build(tmp_path)

def test_a_subprocess(tmp_path):
    start = [sys.executable, "-m", "sphinx"]
    subprocess.run([*start, "-b", "html", str(tmp_path), str(tmp_path / "out")])

def test_a_script_subprocess(tmp_path):
    subprocess.run([sys.executable, "-c", DERIVED, str(tmp_path)])

def test_the_command_on_a_project(tmp_path):
    main(["status", str(tmp_path)])

@pytest.mark.sphinx
def test_marked(tmp_path):
    run_sphinx(tmp_path)

def test_pure():
    assert sum([1, 2]) == 3

def test_the_command_help():
    main(["status", "--help"])
    subprocess.run([sys.executable, "-m", "sphinx_tensorviz", "--help"])

def test_another_subprocess(tmp_path):
    subprocess.run(["git", "status"], cwd=tmp_path)
'''


def test_the_source_check_follows_fixtures_helpers_and_subprocesses(tmp_path: Path) -> None:
    sources = Sources(extra={"helper_mod": HELPER, "test_cases": CASES})
    found = {u.test: u.reason for u in unmarked_builders([TESTS / "test_cases.py"], sources)}
    assert set(found) == {"test_direct", "test_through_two_fixtures", "test_through_an_imported_helper",
                          "test_the_build_fixture", "test_a_subprocess", "test_a_script_subprocess",
                          "test_the_command_on_a_project"}, found
    assert found["test_through_two_fixtures"] == "fixture 'on_site' -> fixture 'site' -> run_sphinx()"
    assert found["test_through_an_imported_helper"] == "helper() -> build_twice() -> run_sphinx()"


def test_a_module_mark_covers_every_test() -> None:
    marked = "import pytest\npytestmark = [pytest.mark.sphinx, pytest.mark.skipif(False, reason='')]\n" + CASES
    sources = Sources(extra={"helper_mod": HELPER, "test_cases": marked})
    assert unmarked_builders([TESTS / "test_cases.py"], sources) == []
    other_mark = CASES.replace("@pytest.mark.sphinx", "@pytest.mark.browser")
    sources = Sources(extra={"helper_mod": HELPER, "test_cases": other_mark})
    assert "test_marked" in {u.test for u in unmarked_builders([TESTS / "test_cases.py"], sources)}


@pytest.mark.parametrize(("argv", "expected"), [
    ([sys.executable, "-m", "sphinx", "-b", "html", "src", "out"], True),
    (["/venv/bin/sphinx-build", "-M", "latexpdf", "src", "out"], True),
    ([sys.executable, "-m", "sphinx_autobuild", "src", "out"], True),
    ([sys.executable, "-c", "from sphinx.cmd.build import main\nmain()", "-b", "html"], True),
    ([sys.executable, "-m", "sphinx_tensorviz", "verify", "lessons"], True),
    (["tensorviz", "status", "lessons"], True),
    ([sys.executable, "-m", "sphinx_tensorviz", "--help"], False),
    ([sys.executable, "-m", "sphinx_tensorviz", "status", "--help"], False),
    ([sys.executable, "-m", "sphinx_tensorviz", "push", "lessons", "s3://b"], False),
    ([sys.executable, "-m", "sphinx_tensorviz.execute.worker.job"], False),
    ([sys.executable, "run.py", "--check"], False),
    ("sphinx-build -b html src out", False),  # a shell string is one word: not recognised (none here)
])
def test_the_guard_recognises_sphinx_command_lines(argv: list[str] | str, expected: bool) -> None:
    assert sphinx_command(argv) is expected


# -- the run-time guard, in a session of its own ----------------------------------------

INNER = '''
import subprocess, sys
from pathlib import Path

import pytest
from sphinx.application import Sphinx


def project(tmp_path):
    (tmp_path / "conf.py").write_text("")
    (tmp_path / "index.rst").write_text("Title\\n=====\\n")
    return tmp_path


def build(src):
    app = Sphinx(src, src, src / "_build", src / "_doctrees", "html", status=None, warning=None)
    app.build()
    return app.statuscode


def test_unmarked_in_process(tmp_path):
    try:
        build(project(tmp_path))
    except Exception:  # the guard's failure is no Exception: this cannot swallow it
        pass


def test_unmarked_subprocess(tmp_path):
    src = project(tmp_path)
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_b")])


@pytest.mark.sphinx
def test_marked_in_process(tmp_path):
    assert build(project(tmp_path)) == 0


@pytest.mark.sphinx
def test_marked_subprocess(tmp_path):
    src = project(tmp_path)
    done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_b")])
    assert done.returncode == 0


def test_unmarked_without_sphinx(tmp_path):
    subprocess.run([sys.executable, "-c", "pass"], check=True)
'''


@pytest.mark.sphinx
def test_the_guard_fails_an_unmarked_build_and_passes_a_marked_one(tmp_path: Path) -> None:
    """A real pytest session (``-p tiers_util``, no conftest) over five tests: the two unmarked
    builds fail, with the fix in the message, and nothing else does."""
    (tmp_path / "test_inner.py").write_text(INNER, "utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    sphinx: a build\n", "utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "tiers_util", "-p", "no:cacheprovider",
                           "-q", "-rf", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          env=env, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    failed = sorted(line.split("::")[1].split()[0] for line in out.splitlines() if line.startswith("FAILED"))
    assert failed == ["test_unmarked_in_process", "test_unmarked_subprocess"], out
    assert "builds a Sphinx project but is not marked 'sphinx'" in out
    assert "runs Sphinx in a subprocess" in out
    assert "3 passed" in out, out


def test_the_guard_is_installed_in_this_session() -> None:
    """Fast-tier tests run under the guard (conftest registers it), so the fast tier never builds."""
    from sphinx.application import Sphinx

    assert hasattr(Sphinx.__init__, "__wrapped__")
    assert hasattr(subprocess.Popen.__init__, "__wrapped__")
