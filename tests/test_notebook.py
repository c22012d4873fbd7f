"""A notebook per lesson (``tensorviz_notebooks``): what it holds, that it validates, and that it runs.

The MyST conversion is checked on its own (fast tier). Then real builds: ``tests/roots/test-notebook``
(figures from a model file and from inline code, a page one folder down, a reStructuredText page that
gets none), and the course from its committed artifacts in ``cache-only`` mode, every lesson's
notebook checked with ``nbformat.validate``. Notebooks are executed by a real Jupyter kernel
(nbclient, ipykernel of this interpreter, registered for the test), and the numbers they recompute
are compared with the artifacts within the tolerance of each value's dtype.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import numpy as np
import pytest

from conftest import Build, copy_root, load_artifacts, run_sphinx
from sphinx_tensorviz.core.kinds import kind_named
from sphinx_tensorviz.execute.tolerance import ASSUMED_DTYPE, default_tolerance, within
from sphinx_tensorviz.features.notebook.myst import Directive, body_blocks, page_blocks
from test_new_kind import _the_kind_leaves_with_this_module  # noqa: F401  (the bar kind's builds leave nothing)

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
LESSON_PAGES = sorted(p.stem for p in LESSONS.glob("*.md") if p.stem != "index")
NOTEBOOKS = Path("_tensorviz") / "notebooks"
#: what MyST writes and Jupyter's Markdown does not read: a directive fence, a role, a label
MYST_LEFT = re.compile(r"^\s*(```+|:::+)\s*\{|\{[a-z:-]+\}`|^\s*\([\w-]+\)=\s*$", re.MULTILINE)


# -- MyST to CommonMark (no build) ----------------------------------------------------------------

MYST = """\
# Title

(a-label)=
Text with {math}`x^2`, a {ref}`link <a-label>` and a {download}`file <models/m.py>`.

% a comment

:::{warning}
Careful: $y$.
:::

```{code-block} python
:linenos:
print(1)
```

```{math}
a = b
```

````{tv-steps}
:graph: g
:title: A tour

```{tv-step} one
:target: x
:title: First

The first step.
```
````

```{tv-heatmap}
:source: models/m.py
:title: A figure
```

```{toctree}
other
```
"""


def test_myst_becomes_plain_commonmark() -> None:
    items = page_blocks(MYST).items
    prose = "\n\n".join(i for i in items if isinstance(i, str))
    assert "Text with $x^2$, a link and a [file](models/m.py)." in prose
    assert "a-label" not in prose and "a comment" not in prose and "other" not in prose
    assert "> **Warning**\n>\n> Careful: $y$." in prose
    assert "```python\nprint(1)\n```" in prose and ":linenos:" not in prose
    assert "$$\na = b\n$$" in prose
    assert MYST_LEFT.search(prose) is None, prose


def test_tv_directives_are_kept_whole_with_their_lines() -> None:
    directives = [i for i in page_blocks(MYST).items if isinstance(i, Directive)]
    assert [(d.name, d.options.get("title")) for d in directives] == [("tv-steps", "A tour"),
                                                                      ("tv-heatmap", "A figure")]
    lines = MYST.splitlines()
    heatmap = directives[1]
    assert lines[heatmap.first - 1] == "```{tv-heatmap}" and lines[heatmap.last - 1] == "```"
    [step] = [i for i in body_blocks(directives[0]).items if isinstance(i, Directive)]  # a tour's steps
    assert (step.name, step.argument, step.options["title"], step.body.strip()) == ("tv-step", "one", "First",
                                                                                  "The first step.")
    assert lines[step.first - 1] == "```{tv-step} one"


# -- a real kernel ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernel spec for this interpreter's ipykernel, found through ``JUPYTER_PATH``."""
    folder = tmp_path_factory.mktemp("jupyter")
    spec = folder / "kernels" / "tensorviz-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "sphinx-tensorviz tests", "language": "python"}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(folder))
        yield "tensorviz-test"


def run_notebook(archive: Path, notebook: str, kernel: str, into: Path) -> dict[str, Any]:
    """Unzip ``archive`` into ``into``, run its notebook top to bottom, and return what each figure's
    cell recomputed, by content hash (read back by one more cell, which prints it as JSON)."""
    from nbclient import NotebookClient

    with zipfile.ZipFile(archive) as opened:
        opened.extractall(into)
    [folder] = list(into.iterdir())
    path = folder / notebook
    document = nbformat.read(path, as_version=4)
    figures = {c.metadata["tensorviz"]["variable"]: c.metadata["tensorviz"]["contentHash"]
               for c in document.cells if c.cell_type == "code" and "contentHash" in c.metadata.get("tensorviz", {})}
    pictures = [c for c in document.cells if c.cell_type == "markdown" and "contentHash" in c.metadata.get("tensorviz", {})]
    # a lesson whose every figure runs on weights the notebook does not carry (a training's, or the shared
    # weights of a :frameworks: figure) shows them as recorded pictures: it still runs top to bottom
    assert figures or pictures, "the notebook has no figure"
    document.cells.append(nbformat.v4.new_code_cell(
        f"import json; print(json.dumps({{name: globals()[name] for name in {sorted(figures)!r}}}))"))
    where = {"metadata": {"path": str(path.parent)}}  # the kernel starts in the notebook's folder
    client = NotebookClient(document, timeout=300, kernel_name=kernel, resources=where)
    client.execute()
    printed = "".join(o.get("text", "") for o in document.cells[-1].outputs if o.output_type == "stream")
    return {figures[name]: values for name, values in json.loads(printed).items()}


def assert_reproduces(recomputed: dict[str, Any], artifact: dict[str, Any]) -> None:
    """Every value the kind's ``run.py`` compares, within its dtype's tolerance (not bit for bit)."""
    expected = importlib.import_module(kind_named(artifact["data"]["kind"]).reproduce).expected_values(artifact)
    assert set(expected) <= set(recomputed)  # what run.py compares (a training also returns its final loss)
    for name, record in expected.items():
        old = np.ravel(np.asarray(record["values"], dtype=np.float64))
        new = np.ravel(np.asarray(recomputed[name], dtype=np.float64))
        assert old.shape == new.shape, name
        largest = float(np.max(np.abs(old))) if old.size else 0.0
        rtol, atol = default_tolerance(record.get("dtype") or ASSUMED_DTYPE, largest)
        assert all(within(float(a), float(b), rtol, atol) for a, b in zip(old, new)), (name, old, new)


# -- what a notebook holds -------------------------------------------------------------------------

def markdown_text(document: Any) -> str:
    return "\n\n".join(c.source for c in document.cells if c.cell_type == "markdown")


def check_notebook(path: Path, artifacts: dict[str, dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """Validate the notebook and check each figure in it; return the figures' artifacts, each with the
    Markdown before it (its title and prompt), in order."""
    document = nbformat.read(path, as_version=4)
    nbformat.validate(document)
    assert MYST_LEFT.search(markdown_text(document)) is None, path
    shown = []
    for number, cell in enumerate(document.cells):
        meta = cell.metadata.get("tensorviz", {})
        if "contentHash" not in meta:
            continue
        before = document.cells[number - 1]
        assert before.metadata.get("tensorviz", {}).get("prompt"), "the title and prompt come before the figure"
        assert before.source.startswith("**")
        shown.append((artifacts[meta["contentHash"]], before.source))
        if cell.cell_type == "code":  # shown as recorded before it is run: the SVG, then the table
            assert cell.execution_count is None
            svg = cell.outputs[0].data["image/svg+xml"]
            assert svg.startswith("<svg") and "tvidtoken" not in svg
            assert cell.outputs[0].data["text/plain"]  # the alt text
            assert "RECORD = json.loads(" in cell.source and "= reproduce()" in cell.source
        else:  # a figure with nothing to run: the picture, as a data: image (Lab shows no SVG attachment)
            assert "](data:image/svg+xml;base64," in cell.source and "attachments" not in cell
    return shown


# -- the test root ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    src = copy_root("notebook", tmp_path_factory.mktemp("notebook") / "src")
    result = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "auto"})
    assert result.statuscode == 0 and not result.tensorviz_warnings(), result.warnings
    assert result.summary == (5, 0, 0)
    return result


@pytest.mark.sphinx
def test_each_markdown_page_with_figures_gets_a_valid_notebook(built: Build) -> None:
    artifacts = load_artifacts(built.app.srcdir)
    folder = built.outdir / NOTEBOOKS
    notebooks = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.ipynb"))
    assert notebooks == ["index.ipynb", "part/deeper.ipynb"]
    index = nbformat.read(folder / "index.ipynb", as_version=4)
    shown = check_notebook(folder / "index.ipynb", artifacts)
    assert [prompt for _, prompt in shown] == [
        "**Two temperatures**\n\n*Predict first:* Which row is flatter?\n- the first (T = 0.5)\n- the second (T = 2)",
        "**A ramp written in the page**\n\n*Predict first:* Where is the largest value?"]
    assert [a["request"]["entry"] for a, _ in shown] == ["models/scale.py", "<inline>"]
    deeper = [prompt for _, prompt in check_notebook(folder / "part" / "deeper.ipynb", artifacts)]
    assert deeper == ["**Two other temperatures**", "**One temperature at a time (t = 0.5)**\n\n*Predict first:* "
                      "Which point is flatter?", "**One temperature at a time (t = 2)**"]  # a sweep asks once
    text = markdown_text(index)
    assert "> **Note**\n>\n> Weights are **positive**." in text
    assert "$$\nT \\to 0 \\Rightarrow \\text{argmax}\n$$" in text
    assert "a comment" not in text and "temperature-intro" not in text
    # the setup cell comes before the first figure's prompt; the answer is folded after the figure
    kinds = [c.cell_type for c in index.cells]
    setup = next(n for n, c in enumerate(index.cells) if c.metadata.get("tensorviz", {}).get("setup"))
    assert kinds.index("code") == setup and index.cells[setup + 1].metadata["tensorviz"]["prompt"]
    answer = index.cells[setup + 3].source
    assert answer.startswith("<details><summary>Answer</summary>") and "**(correct)** the second (T = 2)" in answer
    table = index.cells[setup + 2].outputs[1].data
    assert "<caption>" in table["text/html"] and "token 3" in table["text/plain"]


@pytest.mark.sphinx
def test_the_page_links_its_notebook_and_its_zip(built: Build) -> None:
    page = built.html("index")
    assert 'href="_tensorviz/notebooks/index.ipynb"' in page
    assert 'href="_tensorviz/notebooks/index-notebook.zip"' in page
    assert 'href="../_tensorviz/notebooks/part/deeper-notebook.zip"' in built.html("part/deeper")
    assert "tv-notebook-download" not in built.html("plain")  # reStructuredText: no notebook
    with zipfile.ZipFile(built.outdir / NOTEBOOKS / "index-notebook.zip") as opened:
        names = sorted(opened.namelist())
    inline = next(n for n in names if "lesson_code_" in n)
    assert names == ["index-notebook/index.ipynb", inline, "index-notebook/models/scale.py"]


@pytest.mark.sphinx
def test_the_root_notebooks_run_in_a_real_kernel_and_reproduce_their_artifacts(built: Build, kernel: str,
                                                                               tmp_path: Path) -> None:
    artifacts = load_artifacts(built.app.srcdir)
    folder = built.outdir / NOTEBOOKS
    for archive, notebook in (("index-notebook.zip", "index.ipynb"), ("part/deeper-notebook.zip", "part/deeper.ipynb")):
        recomputed = run_notebook(folder / archive, notebook, kernel, tmp_path / notebook)
        for content_hash, values in recomputed.items():
            assert_reproduces(values, artifacts[content_hash])
    assert len(recomputed) == 3 and len(artifacts) == 5  # part/deeper: a figure and a sweep of two


@pytest.mark.sphinx
def test_notebooks_are_off_by_default(built: Build, tmp_path: Path) -> None:
    src = shutil.copytree(built.app.srcdir, tmp_path / "src", ignore=shutil.ignore_patterns("_build"))
    conf = src / "conf.py"
    conf.write_text(conf.read_text().replace("tensorviz_notebooks = True\n", ""))
    result = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert result.statuscode == 0 and result.summary == (0, 5, 0)
    assert not (result.outdir / NOTEBOOKS).exists() and "tv-notebook-download" not in result.html("index")


@pytest.mark.sphinx
def test_an_edited_page_gets_its_notebook_again(tmp_path: Path) -> None:
    """A rebuild keeps a notebook whose page and figures are as they were, and writes an edited page's again."""
    src = copy_root("notebook", tmp_path / "src")
    first = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "auto"})
    assert first.statuscode == 0 and first.summary == (5, 0, 0)
    deeper = (first.outdir / NOTEBOOKS / "part" / "deeper.ipynb").read_bytes()
    index = src / "index.md"
    index.write_text(index.read_text().replace("It runs as written too.", "It runs as written, too."))
    again = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert again.statuscode == 0 and again.summary == (0, 5, 0)
    assert "It runs as written, too." in markdown_text(nbformat.read(again.outdir / NOTEBOOKS / "index.ipynb", 4))
    with zipfile.ZipFile(again.outdir / NOTEBOOKS / "index-notebook.zip") as opened:
        assert b"It runs as written, too." in opened.read("index-notebook/index.ipynb")
    assert (again.outdir / NOTEBOOKS / "part" / "deeper.ipynb").read_bytes() == deeper


# -- the course -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course built from its committed artifacts, as Read the Docs would, with ``-W``."""
    base = tmp_path_factory.mktemp("course")
    src = shutil.copytree(LESSONS, base / "lessons", ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    out = base / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html", "-d", str(base / "doctrees"),
               str(src), str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900,
                            env={**os.environ, "TENSORVIZ_MODE": "cache-only"})
    assert result.returncode == 0, result.stderr
    assert "tensorviz: 0 executed" in result.stdout
    return out


@pytest.mark.sphinx
def test_every_course_lesson_has_a_valid_notebook_with_each_of_its_figures(course: Path) -> None:
    artifacts = {json.loads(p.read_text())["contentHash"]: json.loads(p.read_text())
                 for p in (LESSONS / "tensorviz_artifacts").glob("*.json")}
    for page in LESSON_PAGES:
        shown = [artifact for artifact, _ in check_notebook(course / NOTEBOOKS / f"{page}.ipynb", artifacts)]
        assert shown, page
        header = nbformat.read(course / NOTEBOOKS / f"{page}.ipynb", as_version=4).cells[1].source
        license_ = re.search(r"^:license: (.+)$", (LESSONS / f"{page}.md").read_text("utf-8"), re.MULTILINE).group(1)
        assert header.startswith("> **Question:** ") and f"*License:* {license_}" in header  # credits travel
        assert {a["lessonId"] for a in shown} == {page}
        html = (course / f"{page}.html").read_text("utf-8")
        assert f'href="_tensorviz/notebooks/{page}-notebook.zip"' in html
        with zipfile.ZipFile(course / NOTEBOOKS / f"{page}-notebook.zip") as opened:
            names = set(opened.namelist())
        for artifact in shown:  # every code file a figure's cell loads is beside the notebook
            if "trained" not in artifact["request"].get("options", {}):
                assert f"{page}-notebook/{artifact['request']['entry']}" in names


@pytest.mark.sphinx
@pytest.mark.parametrize("page", LESSON_PAGES)  # PyTorch, JAX, transformers, Flax; one trains
def test_a_course_notebook_runs_in_a_real_kernel_and_reproduces_the_artifacts(course: Path, kernel: str, page: str,
                                                                            tmp_path: Path) -> None:
    recomputed = run_notebook(course / NOTEBOOKS / f"{page}-notebook.zip", f"{page}.ipynb", kernel, tmp_path)
    for content_hash, values in recomputed.items():
        assert_reproduces(values, json.loads((LESSONS / "tensorviz_artifacts" / f"{content_hash}.json").read_text()))


# -- a figure kind's own cells ---------------------------------------------------------------------

@pytest.mark.sphinx
def test_a_kind_says_what_cells_its_figures_become(tmp_path: Path, kernel: str) -> None:
    """``tv-bar`` (tests/roots/test-bar-kind) names its own cells in its declaration: a Markdown table of
    its bars before the code cell; the notebook uses them, and they run."""
    src = copy_root("bar-kind", tmp_path / "src")
    result = run_sphinx(src, "html", confoverrides={"tensorviz_notebooks": True})
    assert result.statuscode == 0 and not result.tensorviz_warnings(), result.warnings
    document = nbformat.read(result.outdir / NOTEBOOKS / "index.ipynb", as_version=4)
    nbformat.validate(document)
    figure = next(n for n, c in enumerate(document.cells) if "contentHash" in c.metadata.get("tensorviz", {}))
    assert document.cells[figure - 1].source == ("| bar | score |\n|---|---|\n| alpha | 0.5 |\n| beta | 1.5 |\n"
                                                  "| gamma | -0.25 |\n| delta | 2 |\n| epsilon | 1 |")
    assert document.cells[figure - 2].metadata["tensorviz"]["prompt"]  # the prompt still comes first
    [artifact] = load_artifacts(src).values()
    recomputed = run_notebook(result.outdir / NOTEBOOKS / "index-notebook.zip", "index.ipynb", kernel, tmp_path / "run")
    assert_reproduces(recomputed[artifact["contentHash"]], artifact)


@pytest.mark.sphinx
def test_a_figure_not_computed_yet_is_said_so_and_the_notebook_still_validates(tmp_path: Path) -> None:
    src = copy_root("notebook", tmp_path / "src")  # without its store: nothing recorded
    result = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert result.statuscode == 0 and result.summary == (0, 0, 0)
    assert len([w for w in result.tensorviz_warnings() if "[tensorviz.cache_miss]" in w]) == 4  # the pages' own
    document = nbformat.read(result.outdir / NOTEBOOKS / "index.ipynb", as_version=4)
    nbformat.validate(document)
    assert [c.cell_type for c in document.cells].count("code") == 0  # nothing to run: no setup cell either
    missing = [c.source for c in document.cells if "has not been computed yet" in c.source]  # nor failed
    assert len(missing) == 2 and not (src / "tensorviz_artifacts").exists()


@pytest.mark.sphinx
def test_an_artifact_over_a_figure_limit_is_not_drawn_in_the_notebook_either(built: Build, tmp_path: Path) -> None:
    src = shutil.copytree(built.app.srcdir, tmp_path / "src", ignore=shutil.ignore_patterns("_build"))
    result = run_sphinx(src, "html", confoverrides={"tensorviz_execution_mode": "cache-only",
                                                    "tensorviz_max_heatmap_cells": 7})  # the ramp has 6
    assert result.statuscode == 0 and result.summary == (0, 5, 0)
    assert len([w for w in result.tensorviz_warnings() if "[tensorviz.limit]" in w]) == 2  # the page's own
    document = nbformat.read(result.outdir / NOTEBOOKS / "index.ipynb", as_version=4)
    nbformat.validate(document)
    refused = [c.source for c in document.cells if c.source.startswith("*This figure is not drawn: ")]
    assert len(refused) == 1 and "tensorviz_max_heatmap_cells" in refused[0]
    [drawn] = [c for c in document.cells if "contentHash" in c.metadata.get("tensorviz", {})]  # the 2 x 3 ramp
    assert drawn.outputs[0].data["image/svg+xml"].startswith("<svg")
