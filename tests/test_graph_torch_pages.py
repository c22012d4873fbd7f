"""``tv-graph`` pages for PyTorch models (issue 24), one real build of ``tests/roots/test-graph-torch-pages``:

* a ``torch.compile`` model and an eager module calling a compiled function draw their eager graphs,
  with a note in the figure that says so (point 18);
* ``:expand:`` with a name the graph does not have is a located warning listing the closest module
  paths (point 19); a checkpoint typo lists them too (point 8), and a checkpoint on a module that
  never runs says so instead (point 19);
* a tour and activations that refer to a graph whose options failed say that the graph failed, and
  where, not that the page has no graph of that name (point 3).

The warnings come again on a second build that writes the pages from the stored artifacts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, run_sphinx, store_dir, warning_records

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.sphinx

ROOT = Path(__file__).resolve().parent / "roots" / "test-graph-torch-pages"


def line_of(page: str, text: str, after: str | None = None) -> int:
    """The line of the first ``text`` in ``page`` (after the line holding ``after``, if given)."""
    lines = (ROOT / page).read_text("utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if after in line) if after else 0
    return next(n for n, line in enumerate(lines[start:], start + 1) if text in line)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = copy_root("graph-torch-pages", tmp_path_factory.mktemp("torch-pages") / "src")
    first = run_sphinx(src, freshenv=True)
    again = run_sphinx(src, freshenv=True)  # every figure from the store: nothing runs
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    return {"build": first, "again": again, "artifacts": artifacts}


def records(build: Any, page: str) -> list[str]:
    return [w for w in warning_records(build.warnings) if f"{page}.md:" in w and "[tensorviz." in w]


def test_compiled_code_draws_the_eager_graph_with_a_note(built: dict[str, Any]) -> None:
    assert records(built["build"], "compiled") == [], built["build"].warnings
    graphs = {a["request"]["function"]: a["data"] for a in built["artifacts"]
              if a["request"]["function"] in ("compiled_stack", "CallsCompiled")}
    stack, calls = graphs["compiled_stack"], graphs["CallsCompiled"]
    assert stack["compiled"] is True and calls["compiled"] is True
    assert {"layers.0.proj", "layers.1.relu_0"} <= {n["id"] for n in stack["layers"]}
    assert not [n["id"] for n in stack["layers"] if "_orig_mod" in n["id"]]
    assert stack["activations"]["layers.1"]["shape"] == [2, 4]
    assert [n["id"] for n in calls["layers"] if n.get("group")] == ["squash()"]
    page = built["build"].html("compiled")
    assert page.count('class="tv-compiled-note"') == 2
    assert "The graph shows the eager code as it is written" in page


def test_an_expand_name_the_graph_lacks_is_a_located_warning(built: dict[str, Any]) -> None:
    for build in (built["build"], built["again"]):
        found = [w for w in records(build, "names") if ":expand:" in w]
        assert len(found) == 1, build.warnings
        assert f"names.md:{line_of('names.md', '{tv-graph}')}:" in found[0]
        assert "[tensorviz.option]" in found[0]
        assert "tv-graph: :expand: 'layer.0' is not a module of the graph; its closest module paths: layers.0" \
            in found[0]
        assert "'layers.1'" not in found[0]


def test_checkpoint_typo_and_a_module_that_never_ran_say_different_things(built: dict[str, Any]) -> None:
    found = [w for w in records(built["build"], "names") if "checkpoint" in w]
    assert len(found) == 2, built["build"].warnings
    typo, never = found
    assert f"names.md:{line_of('names.md', '{tv-graph}', after='An expand typo')}:" in typo
    assert "checkpoint 'layer.0' is not a module or node of the graph; the closest module paths and nodes: " \
           "layers.0" in typo
    assert f"names.md:{line_of('names.md', '{tv-graph}', after='A checkpoint typo')}:" in never
    assert "checkpoint 'spare' is a module of the model that never ran in this forward pass" in never
    assert "closest" not in never
    assert "[tensorviz.bad_result]" in typo and "[tensorviz.bad_result]" in never


def test_a_tour_and_activations_of_a_failed_graph_say_it_failed_and_where(built: dict[str, Any]) -> None:
    graph_line = line_of("failed.md", "{tv-graph}")
    for build in (built["build"], built["again"]):
        found = records(build, "failed")
        assert len(found) == 3, build.warnings
        option, *referring = found
        assert f"failed.md:{graph_line}:" in option and ":depth:" in option
        assert sorted(w.split(": ", 2)[2].split(":")[0] for w in referring) == ["tv-activations", "tv-steps"]
        for warning in referring:
            assert f"the tv-graph named 'head' failed (failed.md:{graph_line}: see its warning)" in warning
            assert "no tv-graph named" not in warning
            assert "[tensorviz.target]" in warning
            assert re.search(r"failed\.md:\d+: WARNING", warning)
