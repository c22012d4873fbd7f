"""A figure kind from outside the package is one package: ``tests/roots/test-bar-kind/barchart``.

The root's ``conf.py`` adds ``barchart`` to its extensions, and that package declares ``tv-bar`` (a
1-D result drawn as labelled bars) with everything the stages ask of a kind. Real builds of the root
(html, latex, text), a real worker running the NumPy lesson code, the downloaded ``run.py`` run with
this interpreter, ``tensorviz verify`` and ``tensorviz show`` on the project; and a check that the
package itself names no such kind, so nothing outside ``barchart/`` was needed.

Then what a kind from outside met in the package, each in ``sphinx-build`` processes of their own:
an edit of the kind's drawing redraws it; the kind may live in ``_ext/`` (fresh and sandboxed
workers) and runs on Dask; a kind the worker cannot import is said as such; ``tensorviz push -c``
copies its artifacts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOTS, Build, copy_root, directive_lines, edit, load_artifacts, run_sphinx, warning_records

pytestmark = [pytest.mark.sphinx, pytest.mark.execution]

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "sphinx_tensorviz"
LABELS = ["alpha", "beta", "gamma", "delta", "epsilon"]
VALUES = [0.5, 1.5, -0.25, 2.0, 1.0]  # what index.md's code computes
[LINE] = directive_lines(ROOTS / "test-bar-kind" / "index.md", "tv-bar")  # where its warnings point


@pytest.fixture(scope="module", autouse=True)
def _the_kind_leaves_with_this_module() -> Iterator[None]:
    """The catalogue of kinds is process-wide (as Python's modules are): the kind this module's builds
    declare, the import path ``conf.py`` adds and the ``barchart`` modules go when it ends, so later
    tests see the package's kinds only."""
    from sphinx_tensorviz.core import kinds

    path = list(sys.path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kinds, "_DECLARED", dict(kinds._DECLARED))
        yield
    sys.path[:] = path
    for name in [m for m in sys.modules if m == "barchart" or m.startswith("barchart.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A user cache of the module's own: drawings kept by other tests never answer these builds."""
    cache = tmp_path_factory.mktemp("user-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        yield cache


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Path:
    return copy_root("bar-kind", tmp_path_factory.mktemp("bar") / "src")


@pytest.fixture(scope="module")
def html(project: Path) -> Build:
    return run_sphinx(project, "html")


@pytest.fixture(scope="module")
def artifact(project: Path, html: Build) -> dict:
    found = load_artifacts(project)
    assert len(found) == 1, found
    return next(iter(found.values()))


def test_the_html_build_executes_and_draws_the_bars_without_a_warning(html: Build) -> None:
    assert html.statuscode == 0 and warning_records(html.warnings) == [], html.warnings
    assert html.summary == (1, 0, 0)
    page = html.html("index")
    svg = re.search(r'<svg[^>]*class="[^"]*tv-svg-bar[^"]*".*?</svg>', page, re.S)
    assert svg is not None, "no bar chart SVG on the page"
    tooltips = re.findall(r"<rect[^>]*>\s*<title>([^<]+)</title>", svg.group(0))
    assert [t.split(":")[0] for t in tooltips] == LABELS, tooltips
    assert "the tallest is delta" in page  # the alt text, made from the data
    assert "tv-data-table" in page and all(f">{label}<" in page for label in LABELS)


def test_the_artifact_holds_bar_data_that_its_kind_s_schema_accepts(artifact: dict) -> None:
    from sphinx_tensorviz.store.schema import schema_errors

    data = artifact["data"]
    assert data["kind"] == "bar" and data["labels"] == LABELS and data["unit"] == "score"
    assert data["values"] == pytest.approx(VALUES)
    assert schema_errors(artifact) == []
    assert schema_errors({**artifact, "data": {**data, "labels": LABELS[:2]}}) == ["data: 2 labels for 5 values"]


def test_latex_includes_a_pdf_drawn_for_the_figure(project: Path, html: Build) -> None:
    built = run_sphinx(project, "latex")
    assert built.statuscode == 0 and warning_records(built.warnings) == [], built.warnings
    assert built.summary == (0, 1, 0)  # drawn from the artifact the html build stored
    tex = "\n".join(path.read_text("utf-8") for path in built.outdir.glob("*.tex"))
    names = re.findall(r"\\includegraphics(?:\[[^]]*\])?\{([^}]+\.pdf)\}", tex)
    assert len(names) == 1, names
    assert (built.outdir / names[0]).read_bytes().startswith(b"%PDF")


def test_text_shows_the_alt_text_and_the_table(project: Path, html: Build) -> None:
    built = run_sphinx(project, "text")
    assert built.statuscode == 0 and warning_records(built.warnings) == [], built.warnings
    text = " ".join((built.outdir / "index.txt").read_text("utf-8").split())  # lines wrapped at 70
    assert "Bar chart of 5 bars of score; the tallest is delta at 2." in text
    assert "Data: score" in text and all(label in text for label in LABELS)


def test_the_downloaded_run_py_reproduces_the_bars(html: Build, artifact: dict, tmp_path: Path) -> None:
    archives = list((html.outdir / "_tensorviz" / artifact["contentHash"][:16]).glob("reproduce-*.zip"))
    assert len(archives) == 1, archives
    with zipfile.ZipFile(archives[0]) as archive:
        archive.extractall(tmp_path)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    done = subprocess.run([sys.executable, "run.py", "--check"], cwd=folder, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["arrays"]["values"]["ok"] and report["reproduced"]["values"] == pytest.approx(VALUES)


def test_tensorviz_verify_and_show_know_the_kind(project: Path, artifact: dict,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    capsys.readouterr()
    assert main(["verify", str(project)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^ok\s+index\.md:\d+ tv-bar .*compared 5 values", out, re.M), out
    assert main(["show", artifact["contentHash"][:12], str(project)]) == 0
    out = capsys.readouterr().out
    assert "bar chart of score, 5 bars (alpha, beta, gamma, delta, epsilon), from -0.25 to 2" in out, out


def test_push_copies_the_kind_s_artifacts_once_the_course_s_extensions_are_set_up(
        project: Path, artifact: dict, tmp_path: Path) -> None:
    """``tensorviz push`` reads no project, so it knows the package's kinds only: a bar artifact is
    refused, by name and without a traceback, unless ``-c`` names the folder of the course's ``conf.py``,
    whose extensions then declare their kinds. In processes of their own: this one knows ``bar``."""
    name = f"{artifact['contentHash']}.json"

    def push(*options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "sphinx_tensorviz", "push", *options, str(project / "tensorviz_artifacts"),
                   str(tmp_path / "bucket")]
        return subprocess.run(command, capture_output=True, text=True, timeout=120)

    refused = push()
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert f"not copied: {name} " in refused.stderr, refused.stderr
    assert "no figure kind named 'bar'" in refused.stderr and not (tmp_path / "bucket" / name).exists()
    copied = push("-c", str(project))
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "1 artifact(s) copied" in copied.stdout
    assert (tmp_path / "bucket" / name).read_bytes() == (project / "tensorviz_artifacts" / name).read_bytes()


def test_too_many_bars_is_a_located_limit_warning_naming_its_value(tmp_path: Path, user_cache: Path) -> None:
    src = copy_root("bar-kind", tmp_path / "src")
    built = run_sphinx(src, "html", confoverrides={"tensorviz_max_bars": 3})
    found = [w for w in built.tensorviz_warnings() if "[tensorviz.limit]" in w]
    assert len(found) == 1, built.warnings
    assert f"index.md:{LINE}:" in found[0] and "5 bars is over tensorviz_max_bars = 3" in found[0]
    assert load_artifacts(src) == {}  # nothing stored over the limit


def sphinx_process(src: Path, out: Path, *options: str, cache: Path) -> subprocess.CompletedProcess[str]:
    """``sphinx-build -q -b html`` in a process of its own: a fresh interpreter, as an author runs it,
    so ``barchart`` is imported from where ``src/conf.py`` says."""
    command = [sys.executable, "-m", "sphinx", "-q", "-b", "html", *options, str(src), str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)})


def sphinx_build(src: Path, out: Path, *options: str, cache: Path) -> str:
    """:func:`sphinx_process` with ``-W``, which must succeed; returns the page."""
    done = sphinx_process(src, out, "-W", *options, cache=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    return (out / "index.html").read_text("utf-8")


def test_editing_the_kind_s_own_code_redraws_its_figure(tmp_path: Path) -> None:
    """What the machine keeps between builds (drawings, translated figures) is keyed by the kind's
    own files too: a new colour in ``barchart/drawing.py``, then new words in ``barchart/render.py``,
    show in the next build into a fresh output folder, the artifact, page and package unchanged.
    Each build is a ``sphinx-build`` of its own, as an author runs it after editing the kind."""
    src = copy_root("bar-kind", tmp_path / "src")

    def build(out: str) -> str:
        return sphinx_build(src, tmp_path / out, cache=tmp_path / "user-cache")

    first = build("first")
    assert 'fill="#3b6ea8"' in first and "the tallest is delta" in first
    edit(src / "barchart" / "drawing.py", 'Paint(fill="#3b6ea8")', 'Paint(fill="#8a3b12")')  # a helper module
    second = build("second")
    assert 'fill="#8a3b12"' in second and 'fill="#3b6ea8"' not in second
    edit(src / "barchart" / "render.py", "the tallest is", "the highest bar is")  # the module the kind names
    third = build("third")
    assert "the highest bar is delta" in third and "the tallest is" not in third


@pytest.mark.parametrize("worker", ["fresh", "sandboxed"])
def test_a_kind_in_a_folder_conf_py_adds_to_sys_path_runs_in_the_worker(tmp_path: Path, worker: str) -> None:
    """The usual place of a project's own extension is ``_ext/``, which ``conf.py`` puts on ``sys.path``
    of the build, not of the worker: the job names the folder the kind's package is in (a fresh worker
    process, and one in the bubblewrap sandbox, which sees the course's folder only)."""
    from sphinx_tensorviz.execute.sandbox import sandbox_problem

    if worker == "sandboxed" and sandbox_problem("bwrap"):
        pytest.skip(f"the bwrap sandbox cannot run here: {sandbox_problem('bwrap')}")
    src = copy_root("bar-kind", tmp_path / "src")
    (src / "_ext").mkdir()
    (src / "barchart").rename(src / "_ext" / "barchart")
    edit(src / "conf.py", "sys.path.insert(0, os.path.dirname(__file__))",
         'sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))')
    setting = "tensorviz_worker_pool=0" if worker == "fresh" else "tensorviz_sandbox=bwrap"
    page = sphinx_build(src, tmp_path / "out", "-D", setting, cache=tmp_path / "user-cache")
    assert "the tallest is delta" in page
    assert [a["data"]["kind"] for a in load_artifacts(src).values()] == ["bar"]


def test_a_kind_the_worker_cannot_import_is_named_in_a_located_warning(tmp_path: Path) -> None:
    """A kind outside the course's folder (here a folder ``conf.py`` adds to the build's ``sys.path``)
    is not the worker's to import; the warning says so and where a kind must be, not that the lesson
    code failed with an import error of the package's machinery."""
    src = copy_root("bar-kind", tmp_path / "src")
    (src / "barchart").rename(tmp_path / "barchart")
    edit(src / "conf.py", "sys.path.insert(0, os.path.dirname(__file__))", f"sys.path.insert(0, {str(tmp_path)!r})")
    done = sphinx_process(src, tmp_path / "out", "-D", "tensorviz_worker_pool=0", cache=tmp_path / "user-cache")
    found = [w for w in warning_records(done.stderr) if "[tensorviz." in w]
    assert len(found) == 1, done.stderr
    assert found[0].startswith(f"{src / 'index.md'}:{LINE}: WARNING: tv-bar: ") and "[tensorviz.bad_result]" in found[0]
    assert ("the worker cannot import the figure kind's entry barchart.run:run_bar (No module named 'barchart')"
            in found[0]), found[0]
    assert "importlib" not in found[0]  # no traceback through the import machinery


def test_a_dask_worker_gets_the_kind_with_the_job(tmp_path: Path) -> None:
    """A job run by Dask carries its lesson's files, and now the files of a kind the course declares
    itself: the Dask worker's folder for the job is all the worker sees of the course."""
    pytest.importorskip("distributed", reason="the [dask] extra is not installed")
    src = copy_root("bar-kind", tmp_path / "src")
    page = sphinx_build(src, tmp_path / "out", "-D", "tensorviz_executor=dask-local", cache=tmp_path / "user-cache")
    assert "the tallest is delta" in page
    [stored] = load_artifacts(src).values()
    assert stored["data"]["kind"] == "bar" and stored["data"]["values"] == pytest.approx(VALUES)


def mentions_of_the_kind(folder: Path) -> list[str]:
    """``file:line`` of each line under ``folder`` that names the kind, its directive or its package."""
    return [f"{path.relative_to(folder)}:{number}"
            for path in sorted(folder.rglob("*")) if path.suffix in {".py", ".json", ".css", ".js"}
            for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
            if re.search(r"""["']bar["']|tv-bar\b|barchart""", line)]


def test_the_package_names_no_such_kind() -> None:
    """Everything ``tv-bar`` needed is in ``barchart/``: the package mentions it nowhere (while the
    same search finds it in the kind's own package)."""
    assert mentions_of_the_kind(ROOTS / "test-bar-kind" / "barchart")
    assert mentions_of_the_kind(PACKAGE) == []
