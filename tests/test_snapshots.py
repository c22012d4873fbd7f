"""Output snapshots of ``tests/roots/test-snapshot`` for every builder, reviewed in diffs.

The root holds one figure of each kind (a NumPy heatmap, a traced PyTorch graph with a guided
tour and its activations, an authored diagram, a lesson header) and commits its artifact store,
so the builds here execute nothing (``cache-only``) and every machine draws the same output.
For each builder the test compares, normalised (see ``snapshot_util``), what readers get:

* ``html/``: the main content of each page, one element per line;
* ``latex/``: the ``.tex`` document body; ``text/``, ``man/``: the output files;
* ``doctree/``: each document's doctree as the read phase pickled it (``pformat()``); the read
  phase does not depend on the builder, which is checked, so it is stored once.

A change of the output fails with the first lines of the diff. If it is intended, regenerate
with ``python -m pytest tests/test_snapshots.py --update-snapshots`` and review ``git diff
tests/snapshots/``; ``tests/snapshots/README.md`` says more.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from conftest import Build, copy_root, run_sphinx
from snapshot_util import (
    DIFF_LINES,
    RENDERER,
    SNAPSHOTS,
    UPDATE_FLAG,
    canonical_html,
    compare,
    latex_body,
    normalise,
    stale,
)

ROOT = "snapshot"
HERE = SNAPSHOTS / ROOT
DOCS = ("index", "lesson")
#: singlehtml and epub would repeat the html pages nearly line for line: twice the diff to review
BUILDERS = ("html", "latex", "text", "man")
#: the packages whose markup the snapshots contain; recorded, so a failure can say which moved
VERSIONED = ("sphinx", "docutils", "myst-parser")
CACHE_ONLY = {"tensorviz_execution_mode": "cache-only"}


def versions() -> dict[str, str]:
    return {name: metadata.version(name) for name in VERSIONED}


def version_note() -> str:
    """What differs from the versions the snapshots were recorded with (empty when nothing)."""
    path = HERE / "versions.json"
    recorded = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    moved = [f"{name} {recorded.get(name, '?')} -> {now}" for name, now in versions().items()
             if recorded.get(name) != now]
    return f"(recorded with other versions: {', '.join(moved)})\n" if moved else ""


def outputs(built: Build, builder: str) -> dict[str, str]:
    """Snapshot file name -> normalised text, for one build."""
    out, folders = built.outdir, {"srcdir": Path(built.app.srcdir), "outdir": built.outdir}
    found: dict[str, str] = {}
    if builder == "html":
        for doc in DOCS:
            found[f"{doc}.html"] = canonical_html((out / f"{doc}.html").read_text("utf-8"))
    elif builder == "latex":
        (tex,) = out.glob("*.tex")
        found[tex.name] = latex_body(tex.read_text("utf-8"))
    elif builder == "text":
        for doc in DOCS:
            found[f"{doc}.txt"] = (out / f"{doc}.txt").read_text("utf-8")
    elif builder == "man":
        (page,) = out.glob("*.1")
        found[page.name] = page.read_text("utf-8")
    return {name: normalise(text, **folders) for name, text in found.items()}


def doctrees(built: Build) -> dict[str, str]:
    folders = {"srcdir": Path(built.app.srcdir), "outdir": built.outdir}
    return {f"{doc}.txt": normalise(built.app.env.get_doctree(doc).pformat(), **folders) for doc in DOCS}


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Build]:
    """One cache-only build per builder, each of its own copy of the root (with the store)."""
    found = {}
    for builder in BUILDERS:
        src = copy_root(ROOT, tmp_path_factory.mktemp(f"snapshot-{builder}") / "src", with_store=True)
        found[builder] = run_sphinx(src, builder, confoverrides=CACHE_ONLY, freshenv=True)
    return found


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", BUILDERS)
def test_the_build_executes_nothing_and_warns_about_nothing(builds: dict[str, Build], builder: str) -> None:
    """A snapshot of a warning, or of a placeholder for a missing artifact, would be no snapshot."""
    built = builds[builder]
    assert built.statuscode == 0
    assert built.summary == (0, 2, 0), built.status
    assert built.warnings.strip() == "", built.warnings


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", BUILDERS)
def test_output_matches_the_snapshot(builds: dict[str, Build], builder: str, update_snapshots: bool) -> None:
    folder = HERE / builder
    files = {folder / name: text for name, text in outputs(builds[builder], builder).items()}
    compare(files, update_snapshots, version_note())
    stale(folder, set(files), update_snapshots)


@pytest.mark.sphinx
def test_doctrees_match_the_snapshot_and_do_not_depend_on_the_builder(builds: dict[str, Build],
                                                                      update_snapshots: bool) -> None:
    trees = {builder: doctrees(built) for builder, built in builds.items()}
    for builder, found in trees.items():
        assert found == trees["html"], f"the {builder} build reads other doctrees than html: store them per builder"
    folder = HERE / "doctree"
    files = {folder / name: text for name, text in trees["html"].items()}
    compare(files, update_snapshots, version_note())
    stale(folder, set(files), update_snapshots)
    if update_snapshots:
        (HERE / "versions.json").write_text(json.dumps(versions(), indent=2) + "\n", "utf-8")


def test_the_snapshots_show_every_kind_of_figure() -> None:
    """The root is only worth its snapshots while it shows what it claims (read from the committed
    snapshots, so this needs no build)."""
    lesson = (HERE / "html" / "lesson.html").read_text("utf-8")
    index = (HERE / "html" / "index.html").read_text("utf-8")
    assert 'class="tv-figure tv-heatmap"' in index and 'class="tv-svg-heatmap"' in index
    assert 'class="tv-figure tv-diagram"' in index
    assert 'class="tv-lesson docutils container"' in lesson
    assert 'class="tv-figure tv-graph"' in lesson and 'class="tv-steps"' in lesson
    assert 'class="tv-activations"' in lesson and lesson.count('class="tv-checkpoint"') == 2
    assert f'-{RENDERER}"' in lesson  # the graph's data-key, normalised
    tex = next((HERE / "latex").glob("*.tex")).read_text("utf-8")
    assert f"-{RENDERER}.pdf" in tex


@pytest.mark.sphinx
def test_a_new_renderer_fingerprint_changes_nothing_once_normalised(builds: dict[str, Build],
                                                                    tmp_path: Path) -> None:
    """The normalisation replaces exactly what depends on the drawing code's fingerprint.

    A copy of the package with one comment added to ``render/svg.py`` has another renderer
    fingerprint but draws the same; its html and latex builds (``sphinx-build`` in a subprocess
    that imports the copy) must differ from this session's raw output, and not once normalised.
    """
    package = Path(__import__("sphinx_tensorviz").__file__).parent
    copy = tmp_path / "site" / "sphinx_tensorviz"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "render" / "svg.py").open("a", encoding="utf-8") as file:
        file.write("\n# a comment: a new renderer fingerprint, the same drawings\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy.parent), os.environ.get("PYTHONPATH", "")])}
    for builder in ("html", "latex"):
        src = copy_root(ROOT, tmp_path / f"src-{builder}", with_store=True)
        out = tmp_path / f"out-{builder}"
        done = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-E", "-b", builder, "-d", str(out) + ".doctrees",
                               "-D", "tensorviz_execution_mode=cache-only", str(src), str(out)],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
        ours = builds[builder]
        raw_ours = {p.name: p.read_text("utf-8") for p in ours.outdir.glob("*.tex")} if builder == "latex" else \
            {doc: (ours.outdir / f"{doc}.html").read_text("utf-8") for doc in DOCS}
        raw_theirs = {p.name: p.read_text("utf-8") for p in out.glob("*.tex")} if builder == "latex" else \
            {doc: (out / f"{doc}.html").read_text("utf-8") for doc in DOCS}
        assert raw_ours != raw_theirs, f"{builder}: the changed fingerprint changed nothing: this test tests nothing"
        other = Build(app=_Folders(src, out), status="", warnings="", statuscode=0)  # type: ignore[arg-type]
        assert outputs(other, builder) == outputs(ours, builder)


class _Folders:
    """Just the two folders :func:`outputs` needs of a build that ran in a subprocess."""

    def __init__(self, srcdir: Path, outdir: Path) -> None:
        self.srcdir, self.outdir = srcdir, outdir


# -- the snapshot machinery itself (no build) -------------------------------------------

def test_canonical_html_sorts_attributes_folds_whitespace_and_keeps_pre() -> None:
    page = ('<html><body><div class="nav">skip</div><div role="main" class="body">\n  <p  id="x" class="a">Two\n'
            '   words</p><pre class="code">  keep\n    this &lt;b&gt;</pre><br><svg viewBox="0 0 1 1"><rect y="1" x="2"/>'
            '</svg></div></body></html>')
    assert canonical_html(page) == (
        '<div class="body" role="main">\n'
        '  <p class="a" id="x">Two words</p>\n'
        '  <pre class="code">  keep\n    this &lt;b&gt;</pre>\n'
        '  <br>\n'
        '  <svg viewBox="0 0 1 1">\n'
        '    <rect x="2" y="1"></rect>\n'
        '  </svg>\n'
        '</div>\n'
    )


def test_normalise_replaces_folders_and_renderer_parts_but_keeps_content_hashes(tmp_path: Path) -> None:
    text = (f'source="{tmp_path}/src/lesson.md" out {tmp_path}/src/_build '
            'data-key="04c8f23bf62fb589-1c4b4479cfdd" data-src="_tensorviz/graphs/04c8f23bf62fb589-1c4b4479cfdd/" '
            r"\includegraphics[width=0.85\linewidth]{tensorviz-e4a7e62e6322a575-8db6ae29.pdf} "
            "{tensorviz-diagram-tv-index-1.pdf} _tensorviz/e4a7e62e6322a575/run.py content hash e4a7e62e6322")
    assert normalise(text, srcdir=tmp_path / "src", outdir=tmp_path / "src" / "_build") == (
        'source="<srcdir>/lesson.md" out <outdir> '
        'data-key="04c8f23bf62fb589-<renderer>" data-src="_tensorviz/graphs/04c8f23bf62fb589-<renderer>/" '
        r"\includegraphics[width=0.85\linewidth]{tensorviz-e4a7e62e6322a575-<renderer>.pdf} "
        "{tensorviz-diagram-tv-index-1.pdf} _tensorviz/e4a7e62e6322a575/run.py content hash e4a7e62e6322")


def test_a_mismatch_fails_with_every_diff_and_how_to_regenerate(tmp_path: Path) -> None:
    page, other = tmp_path / "page.html", tmp_path / "other.txt"
    page.write_text("one\ntwo\nthree\n", "utf-8")
    other.write_text("a\n", "utf-8")
    compare({page: "one\ntwo\nthree\n", other: "a\n"}, update=False)  # equal: passes
    with pytest.raises(pytest.fail.Exception) as failed:
        compare({page: "one\nTWO\nthree\n", other: "b\n", tmp_path / "new.txt": "x\n"}, update=False,
                note="(a note)\n")
    message = str(failed.value)
    assert "-two" in message and "+TWO" in message and "-a" in message and "+b" in message
    assert "new.txt: no such snapshot" in message and "(a note)" in message
    assert UPDATE_FLAG in message and "git diff tests/snapshots/" in message
    compare({page: "one\nTWO\nthree\n", tmp_path / "new.txt": "x\n"}, update=True)
    assert page.read_text("utf-8") == "one\nTWO\nthree\n" and (tmp_path / "new.txt").read_text("utf-8") == "x\n"


def test_a_long_diff_is_cut_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("".join(f"{n}\n" for n in range(200)), "utf-8")
    with pytest.raises(pytest.fail.Exception) as failed:
        compare({path: "".join(f"{n}!\n" for n in range(200))}, update=False)
    message = str(failed.value)
    # 3 header lines and 400 changed ones (one hunk): the first DIFF_LINES are shown
    assert f"... and {403 - DIFF_LINES} more diff lines" in message
    assert "\n-0\n" in message and "+199!" not in message


def test_stale_snapshots_fail_and_are_removed_on_update(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("k", "utf-8")
    (tmp_path / "gone.txt").write_text("g", "utf-8")
    with pytest.raises(pytest.fail.Exception, match="gone.txt"):
        stale(tmp_path, {tmp_path / "kept.txt"}, update=False)
    stale(tmp_path, {tmp_path / "kept.txt"}, update=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
