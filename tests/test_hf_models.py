"""Hugging Face ``transformers`` models, unmodified, traced by a real Sphinx build (issue 10).

One build of ``tests/roots/test-hf`` (Llama with SDPA and with eager attention, GPT-2, BERT, ViT,
each from a tiny config behind a factory in a helper file, checks in another file) is shared by
every test here. What is checked, on the real library code:

* the build is warning-free (so ``-W`` passes) and every model returns a ``ModelOutput`` whose
  tensors become named outputs (``output.logits``; a KV cache is one output listing its tensors);
* keyword inputs (``input_ids``, ``attention_mask``, ``pixel_values``) are input nodes;
* nodes made in ``transformers`` files link to that file and line (checked against the installed
  file's text), and the artifact carries those functions' lines with package, version and license;
* ``apply_rotary_pos_emb``/``rotate_half``, ``repeat_kv`` (eager) and the mask builders are function
  groups; ``:collapse:`` folds one; the SDPA node shows ``is_causal``, the scale and the GQA ratio,
  and the key/value edges carry the shared-heads note;
* activations know their layout: ViT's patch convolution gives channel maps, eager attention
  weights per-head maps, token checkpoints name their axes;
* the page shows library source panels whose lines come from the artifact, and every node link
  points at a line anchor on the page.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, run_sphinx, store_dir

transformers = pytest.importorskip("transformers")

pytestmark = pytest.mark.sphinx


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = copy_root("hf", tmp_path_factory.mktemp("hf") / "src")
    result = run_sphinx(src)
    graphs = {}
    for path in store_dir(src).glob("*.json"):
        artifact = json.loads(path.read_text("utf-8"))
        graphs[title_of(artifact)] = artifact
    return {"build": result, "graphs": graphs, "html": result.html("index"), "src": src}


def title_of(artifact: dict[str, Any]) -> str:
    """Which of the page's five graphs an artifact is (requests hold no titles: those only draw)."""
    request = artifact["request"]
    if request["function"] == "tiny_llama":
        return EAGER if request["options"]["model_args"].get("attention") == "eager" else LLAMA
    return {"tiny_gpt2": GPT2, "tiny_bert": BERT, "tiny_vit": VIT}[request["function"]]


def graph(built: dict[str, Any], title: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    artifact = built["graphs"][title]
    return artifact, {node["id"]: node for node in artifact["data"]["layers"]}


LLAMA, EAGER, GPT2, BERT, VIT = ("A 2-layer Llama from transformers", "Eager attention", "GPT-2 from transformers",
                                 "BERT from transformers", "ViT from transformers")


def test_every_library_model_builds_without_a_warning(built: dict[str, Any]) -> None:
    build = built["build"]
    assert build.warnings.strip() == "", build.warnings
    assert build.summary == (5, 0, 0)
    assert set(built["graphs"]) == {LLAMA, EAGER, GPT2, BERT, VIT}


def test_model_outputs_become_named_outputs(built: dict[str, Any]) -> None:
    expected = {LLAMA: ["logits"], EAGER: ["logits"], GPT2: ["logits", "cache"],
                BERT: ["last_hidden_state", "pooler_output"], VIT: ["last_hidden_state", "pooler_output"]}
    for title, names in expected.items():
        artifact, nodes = graph(built, title)
        outputs = artifact["data"]["outputs"]
        assert [o["name"] for o in outputs] == names, title
        for output in outputs:
            node = nodes[output["id"]]
            assert node["kind"] == "output" and node["label"] == output["name"]
            feeding = [e["source"] for e in artifact["data"]["connections"] if e["target"] == output["id"]]
            assert feeding, f"{title}: nothing feeds {output['id']}"
    cache = graph(built, GPT2)[1]["output.cache"]
    assert cache["params"]["type"] == "DynamicCache"
    assert cache["params"]["layers.0.keys"] == "1×4×5×8"  # batch × heads × tokens × head dim
    assert graph(built, LLAMA)[0]["data"]["output"]["shape"] == [1, 6, 64]


def test_keyword_inputs_are_input_nodes(built: dict[str, Any]) -> None:
    assert graph(built, BERT)[1]["attention_mask"]["params"] == {"shape": [1, 5], "dtype": "int64"}
    assert graph(built, VIT)[1]["pixel_values"]["params"] == {"shape": [1, 3, 16, 16], "dtype": "float32"}
    _, nodes = graph(built, LLAMA)
    assert nodes["input_ids"]["kind"] == "input" and "input" not in nodes


def test_nodes_link_to_library_files_and_lines(built: dict[str, Any]) -> None:
    site = Path(transformers.__file__).parent.parent
    for title in (LLAMA, GPT2, BERT, VIT):
        artifact, nodes = graph(built, title)
        linked = [n for n in nodes.values() if (n.get("source") or {}).get("file", "").startswith("transformers/")]
        assert len(linked) > 20, title
        files = artifact["data"]["sources"]
        for node in linked:
            key = node["source"]["file"]
            assert files[key]["kind"] == "library"
            lines = (site / key).read_text("utf-8").splitlines()
            text = "\n".join(lines[node["source"]["line"] - 1:node["source"]["endLine"]])
            if node.get("group") == "function":
                assert f"def {node['function'].rpartition('.')[2]}(" in text, (node["id"], text)
            elif node["op"] in ("Linear", "Embedding", "LayerNorm", "Dropout", "Conv2d"):
                assert f"self.{node['id'].rpartition('.')[2].split(':')[0]}" in text, (node["id"], text)
    _, nodes = graph(built, LLAMA)
    assert nodes["model.layers.0.self_attn.q_proj"]["source"]["file"] == "transformers/models/llama/modeling_llama.py"


def test_artifact_carries_the_referenced_library_lines(built: dict[str, Any]) -> None:
    artifact, nodes = graph(built, LLAMA)
    info = artifact["data"]["sources"]["transformers/models/llama/modeling_llama.py"]
    assert (info["package"], info["version"]) == ("transformers", transformers.__version__)
    assert info["license"] and "Apache" in info["license"]
    site = Path(transformers.__file__).parent.parent
    real = (site / info["path"]).read_text("utf-8").splitlines()
    carried = 0
    for excerpt in info["excerpts"]:
        assert excerpt["lines"] == real[excerpt["start"] - 1:excerpt["start"] - 1 + len(excerpt["lines"])]
        carried += len(excerpt["lines"])
    assert carried < len(real) * 0.75, "only the referenced functions travel, not the whole file"
    assert info["excerpts"][0]["start"] > 1, "the license header and imports are not referenced"
    text = "\n".join(line for e in info["excerpts"] for line in e["lines"])
    assert "def apply_rotary_pos_emb(" in text and "def rotate_half(" in text
    for node in nodes.values():  # every line a node points at is in the artifact
        source = node.get("source") or {}
        if source.get("file") == info["path"]:
            assert any(e["start"] <= source["line"] < e["start"] + len(e["lines"]) for e in info["excerpts"])


def test_function_groups_rotary_repeat_kv_and_masks(built: dict[str, Any]) -> None:
    _, nodes = graph(built, LLAMA)
    rotary = nodes["model.layers.1.self_attn.apply_rotary_pos_emb()"]
    assert (rotary["kind"], rotary["group"], rotary["function"]) == ("module", "function", "apply_rotary_pos_emb")
    assert rotary["parent"] == "model.layers.1.self_attn"
    inside = {n["label"].rpartition("_")[0] for n in nodes.values() if n["parent"] == rotary["id"]}
    assert {"mul", "add", "unsqueeze"} <= inside
    halves = [n for n in nodes.values() if n.get("function") == "rotate_half" and n["parent"] == rotary["id"]]
    assert len(halves) == 2  # queries and keys
    assert {"neg", "cat"} <= {n["label"].rpartition("_")[0] for n in nodes.values() if n["parent"] == halves[0]["id"]}
    _, eager = graph(built, EAGER)
    repeats = [n for n in eager.values() if n.get("function") == "repeat_kv"]
    assert len(repeats) == 2, "keys and values are each repeated once"
    expand = [n for n in eager.values() if n["parent"] == repeats[0]["id"] and n["op"] == "Tensor.expand"]
    assert expand[0]["params"] == {"repeats": "axis 2 ×2"}
    masks = {n["function"] for n in eager.values() if n.get("group") == "function"}
    assert "create_causal_mask" in masks
    collapsed = [n for n in eager.values() if n.get("function") == "rotate_half"]
    assert collapsed and all(n["kind"] == "layer" and n.get("collapsed") for n in collapsed)
    assert not [n for n in eager.values() if n["parent"] in {c["id"] for c in collapsed}]


def test_attention_arguments_and_shared_heads(built: dict[str, Any]) -> None:
    artifact, nodes = graph(built, LLAMA)
    sdpa = nodes["model.layers.0.self_attn.scaled_dot_product_attention_0"]
    params = sdpa["params"]
    assert params["is_causal"] is True and params["query_heads"] == 4 and params["kv_heads"] == 2
    assert params["gqa_ratio"] == 2 and params["enable_gqa"] is True
    assert params["scale"] == pytest.approx(8 ** -0.5)
    notes = [e for e in artifact["data"]["connections"] if e["target"] == sdpa["id"] and e.get("note")]
    assert len(notes) == 2 and "shared by 2 of the 4 query heads" in notes[0]["note"]
    _, bert = graph(built, BERT)
    bert_sdpa = [n for n in bert.values() if n["op"].endswith("scaled_dot_product_attention")]
    assert bert_sdpa and bert_sdpa[0]["params"]["is_causal"] is False and "gqa_ratio" not in bert_sdpa[0]["params"]


def test_activation_layouts(built: dict[str, Any]) -> None:
    vit = graph(built, VIT)[0]["data"]["activations"]
    conv = vit["embeddings.patch_embeddings.projection"]
    assert (conv["layout"], conv["count"], conv["mapShape"]) == ("channels", 32, [4, 4])
    assert conv["axes"] == ["channel", "height", "width"]
    assert len(conv["maps"]) == 16 and len(conv["mean"]) == 4 and len(conv["values"]) == 32
    tokens = vit["layers.1"]
    assert (tokens["layout"], tokens["token"], tokens["metrics"]["width"]) == ("tokens", 16, 32)
    weights = graph(built, EAGER)[0]["data"]["activations"]["model.layers.0.self_attn.softmax_0"]
    assert (weights["layout"], weights["count"], weights["mapShape"]) == ("heads", 4, [5, 5])
    for head in weights["maps"]:  # causal attention: each query's weights sum to 1, none on later keys
        for query, row in enumerate(head):
            assert sum(row) == pytest.approx(1.0, abs=1e-5)
            assert all(value == 0.0 for value in row[query + 1:])


def test_checks_from_another_file_pass(built: dict[str, Any]) -> None:
    artifact = built["graphs"][LLAMA]
    assert [(c["name"], c["passed"]) for c in artifact["checks"]] == [
        ("claims/hf_claims.py:check_causal", True), ("claims/hf_claims.py:check_gqa", True)]
    assert "claims/hf_claims.py" in artifact["request"]["files"]


def test_page_shows_library_panels_and_links_resolve(built: dict[str, Any]) -> None:
    page = built["html"]
    assert "Library source (read-only): <code>transformers/models/llama/modeling_llama.py</code>" in page
    assert f"transformers {transformers.__version__}, license: Apache" in page
    ids = set(re.findall(r'id="([^"]+)"', page))
    links = set(re.findall(r'href="#(tv-[^"]+-L\d+)"', page))
    assert any("modeling_llama-py-L" in link for link in links)
    assert links <= ids, sorted(links - ids)[:5]
    assert page.count('class="tv-checkpoint"') == 5
    assert 'data-layout="channels"' in page and 'data-layout="heads"' in page
    assert "rows: query token, columns: key token" in page


def test_cache_only_rebuild_reads_library_lines_from_the_artifact(built: dict[str, Any], tmp_path: Path) -> None:
    """The panels come from the stored excerpts: an artifact edit shows up, the installed file is not read."""
    src = shutil.copytree(built["src"], tmp_path / "src", ignore=shutil.ignore_patterns("_build"))
    artifact_path = next(p for p in store_dir(src).glob("*.json")
                         if title_of(json.loads(p.read_text("utf-8"))) == LLAMA)
    document = json.loads(artifact_path.read_text("utf-8"))
    excerpt = document["data"]["sources"]["transformers/models/llama/modeling_llama.py"]["excerpts"][0]
    excerpt["lines"][0] = excerpt["lines"][0] + "  # marker-from-the-artifact"
    artifact_path.write_text(json.dumps(document), "utf-8")
    rebuilt = run_sphinx(src, confoverrides={"tensorviz_mode": "cache-only"})
    assert "marker-from-the-artifact" in rebuilt.html("index")
