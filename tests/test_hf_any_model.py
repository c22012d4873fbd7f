"""Any PyTorch model as its author wrote it (issue 10), on ``tests/roots/test-any-model``.

A small CNN lives in a colleague's file that stays untouched: a factory in another file builds
it, its checks live in a third (``:checks-source:``), and its ``forward`` returns
``(logits, {"features": ..., "mixed": ...})``. One real build is shared by the tests:

* the nested output becomes ``output.0``, ``output.1.features``, ``output.1.mixed``;
* every node keeps its source link into the file that defines it (not the factory's file);
* a helper function is a group that ``:hide:`` removes with its edges bridged;
* conv feature maps and a pooled ``1×8×1×1`` map are channel layouts; a 5-D checkpoint gives a
  located ``tensorviz.layout`` warning instead of a wrong picture;
* ``:target:`` takes a label as drawn (``squash()``) and an old-style id (``tanh@root#0``);
* a pattern that matches no group and a misspelt keyword input are located warnings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, run_sphinx, store_dir, warning_records
from sphinx_tensorviz.render.ids import element_id

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.sphinx

ROOT = Path(__file__).resolve().parent / "roots" / "test-any-model"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = copy_root("any-model", tmp_path_factory.mktemp("any") / "src")
    result = run_sphinx(src)
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    return {"build": result, "artifacts": artifacts, "src": src}


def artifact_where(built: dict[str, Any], **options: Any) -> dict[str, Any]:
    found = [a for a in built["artifacts"]
             if all(a["request"]["options"].get(k) == v for k, v in options.items())]
    assert len(found) == 1, [a["request"]["options"] for a in built["artifacts"]]
    return found[0]


def nodes_of(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["id"]: node for node in artifact["data"]["layers"]}


def line_of(page: str, text: str) -> int:
    return next(n for n, line in enumerate((ROOT / page).read_text("utf-8").splitlines(), 1) if text in line)


def test_nested_outputs_are_named(built: dict[str, Any]) -> None:
    artifact = artifact_where(built, checkpoints=["conv", "pool", "tanh_0"])
    assert [o["id"] for o in artifact["data"]["outputs"]] == ["output.0", "output.1.features", "output.1.mixed"]
    edges = {(e["source"], e["target"]) for e in artifact["data"]["connections"]}
    assert {("head", "output.0"), ("tanh_0", "output.1.features"), ("sum_0", "output.1.mixed")} <= edges
    assert artifact["data"]["output"]["shape"] == [1, 3]  # the first output drives data.output


def test_factory_keeps_source_links_to_the_defining_file(built: dict[str, Any]) -> None:
    artifact = artifact_where(built, checkpoints=["conv", "pool", "tanh_0"])
    model = (ROOT / "models" / "small_cnn.py").read_text("utf-8").splitlines()
    nodes = nodes_of(artifact)
    for node_id, text in (("conv", "self.conv = nn.Conv2d"), ("head", "self.head = nn.Linear"),
                          ("tanh_0", "torch.tanh(centred)"), ("mul_0", "features.unsqueeze(1) *"),
                          ("squash()", "def squash(")):
        source = nodes[node_id]["source"]
        assert source["file"] == "models/small_cnn.py", node_id
        assert text in model[source["line"] - 1], (node_id, model[source["line"] - 1])
    assert artifact["data"]["sources"] == {"models/small_cnn.py": {"path": "models/small_cnn.py", "kind": "project"}}
    page = built["build"].html("index")
    assert page.count("Source: <code>models/small_cnn.py</code>") == 2  # one panel per graph
    ids = set(re.findall(r'id="([^"]+)"', page))
    links = set(re.findall(r'href="#(tv-[^"]+-L\d+)"', page))
    assert any("models-small_cnn-py-L" in link for link in links) and links <= ids


def test_checks_from_a_checks_source_file(built: dict[str, Any]) -> None:
    artifact = artifact_where(built, checkpoints=["conv", "pool", "tanh_0"])
    assert [(c["name"], c["passed"]) for c in artifact["checks"]] == [("check_three_classes", True)]
    assert "models/cnn_checks.py" in artifact["request"]["files"]


def test_hide_drops_a_group_and_bridges_its_edges(built: dict[str, Any]) -> None:
    hidden = artifact_where(built, hide=["squash"])
    nodes = nodes_of(hidden)
    assert not {"squash()", "mean_0", "sub_0", "tanh_0"} & set(nodes)
    edges = {(e["source"], e["target"]) for e in hidden["data"]["connections"]}
    assert {("conv", "pool"), ("conv", "output.1.features")} <= edges
    assert [e["id"] for e in hidden["data"]["connections"]] == [f"edge-{n}" for n in range(1, len(edges) + 1)]


def test_feature_maps_have_channel_layouts(built: dict[str, Any]) -> None:
    records = artifact_where(built, checkpoints=["conv", "pool", "tanh_0"])["data"]["activations"]
    conv, pool = records["conv"], records["pool"]
    assert (conv["layout"], conv["count"], conv["mapShape"]) == ("channels", 8, [6, 6])
    assert (pool["layout"], pool["count"], pool["mapShape"]) == ("channels", 8, [1, 1])
    assert "token" not in pool, "a pooled 1×8×1×1 map is not 'token 0, 1 features'"
    for k in range(8):  # the mean of each channel map, computed here from the stored maps
        assert pool["values"][k] == pytest.approx(pool["maps"][k][0][0])
        assert conv["values"][k] == pytest.approx(sum(map(sum, conv["maps"][k])) / 36)
    page = built["build"].html("index")
    assert "conv: 8 channels of 6×6 (rows: height, columns: width)" in page
    assert "channel mean" in page


def test_ambiguous_layout_is_a_located_warning(built: dict[str, Any]) -> None:
    records = [w for w in warning_records(built["build"].warnings) if "[tensorviz.layout]" in w]
    assert len(records) == 1
    assert f"problems.md:{line_of('problems.md', '{tv-activations}')}:" in records[0]
    assert "shape [1, 8, 8, 6, 6]" in records[0] and ":layout:" in records[0]


def test_targets_take_drawn_labels_and_old_ids(built: dict[str, Any]) -> None:
    assert not [w for w in warning_records(built["build"].warnings) if "index.md" in w]
    page = built["build"].html("index")
    assert 'data-target="squash()"' in page and 'data-target="tanh_0"' in page  # resolved to node ids
    assert f'href="#{element_id("tv-index-0", "c", "squash()")}"' in page
    assert f'href="#{element_id("tv-index-0", "n", "tanh_0")}"' in page


def test_bad_patterns_and_keywords_are_located(built: dict[str, Any]) -> None:
    records = warning_records(built["build"].warnings)
    collapse = [w for w in records if "no_such_function" in w]
    assert len(collapse) == 1 and f"problems.md:{line_of('problems.md', ':collapse:') - 3}:" in collapse[0]
    assert "matches no function group; the groups are squash" in collapse[0]
    keyword = [w for w in records if "'pictures'" in w]
    assert len(keyword) == 1 and "problems.md:" in keyword[0]
    assert built["build"].summary[2] == 2  # two failed directives, and the build finished
    layout = [w for w in records if ":layout: names pool" in w]
    assert len(layout) == 1 and "[tensorviz.option]" in layout[0]
    assert f"problems.md:{line_of('problems.md', ':layout: {pool') - 4}:" in layout[0]
