"""Issue 13, cases 2 and 3 and the figure limits: results are bounded, and every refusal says what to do.

One real build (module-scoped) of a project whose pages each push one limit: a 2000 x 2000
result, 50 MB of printed output, a result over ``tensorviz_max_result_mb``, a graph over
``tensorviz_max_graph_nodes``; and a rebuild in ``cache-only`` mode with lower limits, where the
same limits apply to artifacts already in the store.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import Build, load_artifacts, run_sphinx, store_dir
from hostile_util import (
    assert_store_valid,
    heatmap_page,
    located,
    make_project,
    no_warnings_for,
    nothing_left_behind,
    page_size,
)
from sphinx_tensorviz.config import CONFIG_VALUES
from sphinx_tensorviz.execute.worker.tail_buffer import TailBuffer

#: every page of this project stays well below this, whatever its lesson code returned or printed
PAGE_BOUND = 300_000

MODEL = '''\
import torch
from torch import nn


class Deep(nn.Module):
    """Six layers: more nodes than the project's tensorviz_max_graph_nodes = 4."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[nn.Linear(4, 4) for _ in range(6)])

    def forward(self, x):
        return self.layers(x)
'''

PAGES = {
    "huge": heatmap_page("import numpy as np\n\nresult = np.random.rand(2000, 2000)", "Huge"),
    "chatty": heatmap_page(
        "import sys\nimport numpy as np\n\nsys.stdout.write('x' * 50_000_000)\nprint('ENDOFOUTPUT')\n"
        "result = np.eye(3)", "Chatty"),
    "fat": heatmap_page("import numpy as np\n\nresult = np.random.rand(120, 120)", "Fat"),
    "noisy": heatmap_page("import os, sys\n\nsys.stderr.write('e' * 50_000_000)\nos.write(2, b'f' * 50_000_000)\n"
                          "raise ValueError('after the noise')", "Noisy"),
    # switches off the worker's own check: the build checks the result again
    "sneaky": heatmap_page("import numpy as np\nimport sphinx_tensorviz.execute.worker.job as w\n\n"
                           "w.check_heatmap_cells = lambda *args: None\nresult = np.zeros((130, 130))", "Sneaky"),
    "fine": heatmap_page("import numpy as np\n\nprint('hello')\nresult = np.arange(6.0).reshape(2, 3)", "Fine"),
    "deep": "# Deep\n\n```{tv-graph}\n:model: models/deep.py:Deep\n:inputs: [{shape: [2, 4], fill: ones}]\n"
            ":title: Deep\n```\n",
}
CONF = "tensorviz_max_result_mb = 0.25\ntensorviz_max_graph_nodes = 4\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    src = make_project(tmp_path_factory.mktemp("limits") / "src", PAGES, CONF, {"models/deep.py": MODEL})
    return src, run_sphinx(src)


@pytest.mark.sphinx
def test_the_build_finishes_and_leaves_a_valid_store(built: tuple[Path, Build]) -> None:
    src, build = built
    assert build.statuscode == 0, build.warnings
    assert "Traceback (most recent call last)" not in build.warnings + build.status  # the build's own
    assert_store_valid(src)
    nothing_left_behind()
    for page in PAGES:
        assert page_size(build, page) < PAGE_BOUND, page


@pytest.mark.sphinx
def test_a_2000_by_2000_result_is_refused_with_advice(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "huge", "limit", "2000 x 2000", "4,000,000 cells", "tensorviz_max_heatmap_cells = 16,384",
            "downsample")
    assert "This figure could not be computed" in build.html("huge")
    stored = json.loads(next((store_dir(src) / "failures").glob("*.json")).read_text("utf-8"))
    assert stored  # the failure is recorded, so the same code is not run again on the next build
    assert all(len(p.read_bytes()) < PAGE_BOUND for p in store_dir(src).rglob("*.json"))


@pytest.mark.sphinx
def test_printed_output_keeps_its_tail_with_a_note(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "chatty", "limit", "tensorviz_max_stdout_kb", "only the last 64 KB")
    (artifact,) = [a for a in load_artifacts(src).values() if "ENDOFOUTPUT" in a["stdout"]]
    assert artifact["stdout"].startswith("[... ")
    assert "truncated" in artifact["stdout"].splitlines()[0]
    assert len(artifact["stdout"]) < 66 * 1024 + 300
    page = build.html("chatty")
    assert "ENDOFOUTPUT" in page and "<svg" in page
    downloads = [p for p in build.outdir.rglob("artifact.json") if "ENDOFOUTPUT" in p.read_text("utf-8")]
    assert downloads and all(p.stat().st_size < PAGE_BOUND for p in downloads)


@pytest.mark.sphinx
def test_the_build_checks_the_limits_again_after_the_worker(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "sneaky", "limit", "result refused", "130 x 130 heatmap has 16,900 cells",
            "tensorviz_max_heatmap_cells")
    assert "This figure could not be computed" in build.html("sneaky")  # refused, not stored and then hidden
    assert not [a for a in load_artifacts(src).values() if len(a["data"].get("values", [])) == 130]


@pytest.mark.sphinx
def test_a_flood_on_stderr_is_bounded_too(built: tuple[Path, Build]) -> None:
    src, build = built
    record = located(build, src, "noisy", "execution", "after the noise")
    assert len(record) < 20_000
    assert "after the noise" in build.html("noisy")


@pytest.mark.sphinx
def test_a_result_over_the_size_limit_is_refused(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "fat", "limit", "MB as stored JSON", "tensorviz_max_result_mb = 0.25")


@pytest.mark.sphinx
def test_a_graph_over_the_node_limit_is_refused(built: tuple[Path, Build]) -> None:
    src, build = built
    located(build, src, "deep", "limit", "nodes, over tensorviz_max_graph_nodes = 4", "smaller configuration",
            directive="tv-graph")


@pytest.mark.sphinx
def test_ordinary_figures_are_not_affected(built: tuple[Path, Build]) -> None:
    src, build = built
    no_warnings_for(build, src, "fine")
    assert "hello" in build.html("fine")


@pytest.mark.sphinx
def test_stored_artifacts_over_the_limits_are_not_drawn(built: tuple[Path, Build], tmp_path: Path) -> None:
    """The same limits hold for artifacts already in the store (committed by someone else, or older)."""
    src, _ = built
    before = {h: p.read_bytes() for h, p in ((p.stem, p) for p in store_dir(src).glob("*.json"))}
    smaller = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only",
                                             "tensorviz_max_result_mb": 0.01},
                         freshenv=True)
    assert smaller.statuscode == 0, smaller.warnings
    located(smaller, src, "chatty", "store", "bytes, over tensorviz_max_result_mb = 0.01", "not read")
    no_warnings_for(smaller, src, "fine")
    assert {p.stem: p.read_bytes() for p in store_dir(src).glob("*.json")} == before  # nothing rewritten
    cells = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only",
                                           "tensorviz_max_heatmap_cells": 4}, freshenv=True)
    located(cells, src, "fine", "limit", "2 x 3 heatmap has 6 cells", "tensorviz_max_heatmap_cells = 4")
    assert "This figure is not drawn" in cells.html("fine")


def test_every_limit_is_a_documented_config_value_with_a_generous_graph_default() -> None:
    from sphinx_tensorviz.core.kinds import declared as declared_kinds

    kind_values = [limit.value for kind in declared_kinds() for limit in kind.limits]  # a kind declares its own
    assert {v.name for v in kind_values} >= {"tensorviz_max_heatmap_cells", "tensorviz_max_graph_nodes"}
    defaults: dict[str, Any] = {v.name: v.default for v in (*CONFIG_VALUES, *kind_values)}
    assert defaults["tensorviz_max_graph_nodes"] >= 20_000  # a 24-layer Llama is about 1,700 nodes
    assert 1 <= defaults["tensorviz_max_result_mb"] <= 16
    assert defaults["tensorviz_max_stdout_kb"] == 64
    # the reference page shows each declaration's help under its topic (tests/test_docs.py checks the built page)
    docs = (Path(__file__).resolve().parent.parent / "docs" / "reference" / "configuration.md").read_text("utf-8")
    declared = {v.name: v for v in (*CONFIG_VALUES, *kind_values)}
    for name in ("tensorviz_max_result_mb", "tensorviz_max_stdout_kb", "tensorviz_max_heatmap_cells",
                 "tensorviz_max_graph_nodes", "tensorviz_sandbox"):
        assert declared[name].help.strip(), name
        assert f"```{{tensorviz-config-values}} {declared[name].topic}\n" in docs, name


def test_the_tail_buffer_keeps_everything_under_its_limit() -> None:
    buffer = TailBuffer(1024 * 1024)
    for _ in range(3):
        buffer.write("y" * 100_000)
        assert buffer.getvalue() == "y" * 100_000 * (_ + 1)  # reading it compacts it: nothing may be lost
    assert buffer.truncation_note() is None


def test_the_tail_buffer_keeps_exactly_the_end() -> None:
    buffer = TailBuffer(1024)
    for n in range(10_000):
        buffer.write(f"{n}\n")
    text = buffer.getvalue()
    assert text.endswith("9999\n")
    kept = text.split("\n", 1)[1]
    assert len(kept) == 1024
    assert "".join(f"{n}\n" for n in range(10_000)).endswith(kept)
    assert buffer.getvalue() == text  # reading twice changes nothing
    assert f"printed {len(''.join(f'{n}' + chr(10) for n in range(10_000))):,} characters" in buffer.truncation_note()


@pytest.mark.sphinx
def test_invalid_limits_and_sandboxes_fall_back_to_the_defaults(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"fine": PAGES["fine"]},
                       "tensorviz_max_stdout_kb = 0\ntensorviz_max_graph_nodes = -5\n"
                       "tensorviz_max_result_mb = True\ntensorviz_sandbox = 'docker'\n")
    build = run_sphinx(src)
    assert build.statuscode == 0, build.warnings
    config = [w for w in build.tensorviz_warnings() if "[tensorviz.config]" in w]
    for expected in ("tensorviz_max_stdout_kb = 0 must be a number of at least 1; using 64",
                     "tensorviz_max_graph_nodes = -5 must be a number of at least 1; using 20000",
                     "tensorviz_max_result_mb = True must be a number of at least 0.01; using 8",
                     "tensorviz_sandbox = 'docker' must be one of '', 'bwrap'; using ''"):
        assert any(expected in w for w in config), (expected, config)
    no_warnings_for(build, src, "fine")
    assert "hello" in build.html("fine")


@pytest.mark.sphinx
def test_a_refusal_is_recorded_and_raising_the_limit_runs_the_code_again(built: tuple[Path, Build],
                                                                         tmp_path: Path) -> None:
    src = Path(shutil.copytree(built[0], tmp_path / "copy", ignore=shutil.ignore_patterns("_build")))
    again = run_sphinx(src)
    assert again.summary[0] == 0  # nothing ran again: the refusals are recorded like any failure
    located(again, src, "deep", "limit", "over tensorviz_max_graph_nodes = 4", directive="tv-graph")
    raised = run_sphinx(src, confoverrides={"tensorviz_max_graph_nodes": 100})
    assert raised.summary[0] == 1  # only the graph, refused under the old limit, ran again
    no_warnings_for(raised, src, "deep")
    assert "<svg" in raised.html("deep")
    assert_store_valid(src)
