"""``tv-attention`` (issue 26): the attention grid of every layer and head, end to end.

One real build of ``tests/roots/test-attention`` is shared: hand-set heads and the course's own
attention (explicit softmax, fused SDPA), unmodified transformers models from tiny configs (Llama,
GPT-2, Mistral, BERT, Qwen2, GPT-NeoX) and a Flax NNX model. The words each head gets are checked
against weights whose pattern is known by construction; bad input (too many cells, a model with no
attention) is a located warning. The pattern rules themselves are unit-tested on hand-made weights.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Build, copy_root, directive_lines, run_sphinx, store_dir, warning_records, write
from sphinx_tensorviz.features.attention.checks import ROW_SUM_TOLERANCE, consistency_errors, row_sum_tolerance
from sphinx_tensorviz.features.attention.patterns import WORDS, strongest
from sphinx_tensorviz.store.artifacts import schema_errors

ROOT = Path(__file__).resolve().parent / "roots" / "test-attention"
LIBRARY = ("llama", "gpt2", "mistral", "bert", "qwen2", "gpt_neox")


# -- the words, from weights with a known pattern (no build) ------------------------------------------

def causal(targets: list[int], length: int, sharp: float = 0.9) -> list[list[float]]:
    """Each query puts ``sharp`` on its target and spreads the rest evenly over what else it sees."""
    rows = []
    for query, target in enumerate(targets):
        seen = query + 1
        rest = (1 - sharp) / (seen - 1) if seen > 1 else 0.0
        rows.append([(sharp if k == target else rest) if k < seen else 0.0 for k in range(length)]
                    if seen > 1 else [1.0] + [0.0] * (length - 1))
    return rows


TOKENS = ["a", "b", "c", "d", "a", "b", "c", "d"]


@pytest.mark.parametrize(("pattern", "targets"), [
    ("previous", [max(q - 1, 0) for q in range(8)]),
    ("self", list(range(8))),
    ("first", [0] * 8),
    ("induction", [q for q in range(4)] + [q - 3 for q in range(4, 8)]),
])
def test_the_strongest_pattern_is_named(pattern: str, targets: list[int]) -> None:
    weights = causal(targets, len(TOKENS))
    found = strongest(weights, TOKENS)
    assert found.name == pattern
    assert found.sentence().startswith(WORDS[pattern])
    assert found.score == pytest.approx(0.9, abs=1e-9)  # every query put 0.9 on its target


def test_even_weights_are_broad_and_weak_ones_are_not_named() -> None:
    even = [[1 / (q + 1) if k <= q else 0.0 for k in range(6)] for q in range(6)]
    assert strongest(even, list("abcdef")).name == "broad"
    # each query splits its weight between itself and its previous token (every other key it sees
    # gets 0.02): no pattern is strong, nor are the weights even
    split = [[1.0] + [0.0] * 5]
    for q in range(1, 6):
        rest = 0.02 * (q - 1)
        split.append([(1 - rest) / 2 if k in (q, q - 1) else 0.02 if k < q else 0.0 for k in range(6)])
    found = strongest(split, list("abcdef"))
    assert found.name is None and "no single pattern" in found.sentence()


def test_induction_needs_a_repeated_token() -> None:
    weights = causal([max(q - 1, 0) for q in range(6)], 6)
    assert "induction" not in {strongest(weights, list("abcdef")).name, strongest(weights, list("abcdef")).nearest}


def test_consistency_allows_causal_zeros_and_refuses_rows_that_do_not_sum_to_one() -> None:
    data = {"kind": "attention", "tokens": list("abc"), "dtype": "float32",
            "maps": [{"layer": 0, "head": 0, "weights": causal([0, 0, 1], 3)}]}
    assert consistency_errors(data) == []
    data["maps"][0]["weights"][2] = [0.5, 0.2, 0.0]
    assert any("sum to 1" in p for p in consistency_errors(data))
    data["maps"][0]["weights"] = [[1.0, 0.0], [0.5, 0.5]]
    assert any("not 3 x 3" in p for p in consistency_errors(data))


# -- one real build -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = copy_root("attention", tmp_path_factory.mktemp("attention") / "src")
    result = run_sphinx(src, warningiserror=True)
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    return {"build": result, "src": src, "artifacts": artifacts}


def artifact_of(built: dict[str, Any], function: str, **model_args: Any) -> dict[str, Any]:
    (found,) = [a for a in built["artifacts"] if a["request"]["function"] == function
                and all(a["request"]["options"]["model_args"].get(k) == v for k, v in model_args.items())
                and ("heads" in model_args or "heads" not in a["request"]["options"]["model_args"])]
    return found


@pytest.mark.sphinx
def test_the_root_builds_clean_under_w(built: dict[str, Any]) -> None:
    build: Build = built["build"]
    assert build.statuscode == 0 and build.tensorviz_warnings() == [], build.warnings
    assert build.summary == (15, 0, 0)
    for artifact in built["artifacts"]:
        assert schema_errors(artifact) == [], artifact["request"]["function"]


@pytest.mark.sphinx
@pytest.mark.parametrize("factory", LIBRARY)
def test_library_models_give_every_layer_and_head(built: dict[str, Any], factory: str) -> None:
    data = artifact_of(built, factory)["data"]
    layers = [1] if factory == "mistral" else [0, 1]  # the page names :layers: 1 for Mistral
    assert [(m["layer"], m["head"]) for m in data["maps"]] == [(layer, head) for layer in layers for head in (0, 1)]
    assert data["dtype"] == "float32"
    causal_model = factory != "bert"
    for item in data["maps"]:
        weights = item["weights"]
        assert all(sum(row) == pytest.approx(1, abs=1e-4) for row in weights)
        future = [w for q, row in enumerate(weights) for k, w in enumerate(row) if k > q]
        assert (max(future) == 0) == causal_model, factory  # BERT attends both ways


@pytest.mark.sphinx
def test_a_sweep_over_a_model_argument_draws_a_grid_per_point(built: dict[str, Any]) -> None:
    for heads in (1, 4):
        data = artifact_of(built, "MultiHeadAttention", heads=heads)["data"]
        assert [m["head"] for m in data["maps"]] == list(range(heads))
    page = built["build"].html("course")
    (sweep,) = re.findall(r'<div class="tv-sweep tv-sweep-figures".*?</figure>\s*</div>\s*</div>', page, re.S)
    assert sweep.count('class="tv-svg-attention"') == 2 and "layer 0 head 3" in sweep


@pytest.mark.sphinx
def test_a_learned_sink_is_drawn_and_said(built: dict[str, Any]) -> None:
    """GPT-OSS gives part of each query's weight to a learned sink that is no token: its rows sum
    below one, which the data records and the description says, instead of a refused artifact."""
    data = artifact_of(built, "gpt_oss")["data"]
    sums = [sum(row) for item in data["maps"] for row in item["weights"]]
    assert data["learnedSink"] is True and max(sums) <= 1 + 1e-6 and min(sums) < 0.99
    assert consistency_errors(data) == []
    assert consistency_errors({k: v for k, v in data.items() if k != "learnedSink"}) != []
    assert "learned sink, which is no token, takes the rest" in built["build"].html("library")


@pytest.mark.sphinx
def test_hand_set_heads_get_their_pattern_words(built: dict[str, Any]) -> None:
    """The model's heads are previous-token, self and induction by construction (models/course.py)."""
    artifact = artifact_of(built, "Patterned")
    assert artifact["data"]["tokens"] == ["the", "cat", "sat", "on", "mat"] * 2  # from models/vocabulary.py
    assert [c["passed"] for c in artifact["checks"]] == [True]
    page = html_lib.unescape(built["build"].html("course"))
    for head, pattern in enumerate(("previous", "self", "induction")):
        assert f"head 0.{head}: {WORDS[pattern]}" in page
        assert f"Enlarge layer 0 head {head}: {WORDS[pattern]}" in page
    (desc,) = {d for d in re.findall(r"<desc[^>]*>(.*?)</desc>", page, re.S) if "hand" in d.lower() or "3 heads" in d}
    assert all(WORDS[p] in desc for p in ("previous", "self", "induction"))


@pytest.mark.sphinx
def test_the_grid_shares_one_scale_and_labels_each_map(built: dict[str, Any]) -> None:
    page = built["build"].html("library")
    grids = re.findall(r'<svg[^>]*class="tv-svg-attention".*?</svg>', page, re.S)
    assert len(grids) == 7
    assert all(grid.count("tv-colour-bar") == 1 for grid in grids)
    assert "layer 1 head 1" in grids[0] and "layer 0 head 0" in grids[0]
    # each head: a larger view in its own <details>, and its own table, in every figure
    assert page.count("<summary>Enlarge layer") == 4 * 6 + 2
    assert page.count("query \\ key") == 4 * 6 + 2


@pytest.mark.sphinx
@pytest.mark.parametrize("page", ["course", "library", "nnx"])
def test_every_id_on_a_page_is_unique(built: dict[str, Any], page: str) -> None:
    """Each head's larger view has ids of its own figure's, though a page holds several grids."""
    from sphinx_tensorviz.render.svg import ID_TOKEN

    html = built["build"].html(page)
    ids = re.findall(r'\sid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})[:5]
    assert ID_TOKEN not in html


@pytest.mark.sphinx
def test_course_models_nnx_and_equinox_are_captured(built: dict[str, Any]) -> None:
    fused = artifact_of(built, "FusedStack")["data"]  # SDPA, computed into weights; :heads: 1 of each layer
    assert [(m["layer"], m["head"]) for m in fused["maps"]] == [(0, 1), (1, 1)]
    lessons = artifact_of(built, "MultiHeadAttention", heads=2)["data"]
    assert lessons["tokens"] == ["the", "cat", "sat", "on", "the", "mat"]
    nnx = artifact_of(built, "TinyNNX")
    assert nnx["request"]["backend"] == "jax"
    assert [(m["layer"], m["head"]) for m in nnx["data"]["maps"]] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(sum(row) == pytest.approx(1, abs=1e-4) for m in nnx["data"]["maps"] for row in m["weights"])
    equinox = artifact_of(built, "TinyEquinox")["data"]  # a vmap over heads: its axis is the heads'
    assert [(m["layer"], m["head"]) for m in equinox["maps"]] == [(0, 0), (0, 1)]
    assert all(w == 0 for m in equinox["maps"] for q, row in enumerate(m["weights"]) for w in row[q + 1:])


@pytest.mark.sphinx
def test_a_half_precision_model_is_stored_with_its_dtype(built: dict[str, Any]) -> None:
    """bfloat16 weights miss a row sum of one by more than float32's tolerance: the store takes them
    (checked against their own dtype's) and records the dtype, which verify compares within."""
    data = artifact_of(built, "HalfPrecision")["data"]
    assert data["dtype"] == "bfloat16"
    worst = max(abs(sum(row) - 1) for item in data["maps"] for row in item["weights"])
    assert ROW_SUM_TOLERANCE < worst <= row_sum_tolerance("bfloat16")
    assert consistency_errors(data) == []


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["latex", "text", "man"])
def test_latex_text_and_man_from_the_stored_artifacts(built: dict[str, Any], builder: str) -> None:
    build = run_sphinx(built["src"], builder, warningiserror=True)
    assert build.statuscode == 0 and build.summary == (0, 15, 0), build.warnings
    if builder == "text":
        text = (build.outdir / "course.txt").read_text("utf-8")
        assert f"head 0.0: {WORDS['previous']}" in text and "query \\ key" in text
    elif builder == "man":
        (page,) = build.outdir.glob("*.1")
        assert WORDS["induction"] in page.read_text("utf-8")
    else:
        assert list(build.outdir.glob("*.pdf")), "no PDF drawn for the grids"


@pytest.mark.sphinx
def test_run_py_recomputes_the_weights(built: dict[str, Any]) -> None:
    for function in ("Patterned", "gpt2", "TinyNNX", "TinyEquinox"):
        folder = built["build"].outdir / "_tensorviz" / artifact_of(built, function)["contentHash"][:16]
        done = subprocess.run([sys.executable, "run.py", "--check"], cwd=folder, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["arrays"]["weights"]["ok"], report


# -- bad input ----------------------------------------------------------------------------------------

BAD = """# Bad

```{tv-attention}
:model: models/course.py:Patterned
:inputs: [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
```

```{tv-attention}
:model: models/course.py:NoAttention
:inputs: [1, 2, 3]
```

```{tv-attention}
:model: models/course.py:Patterned
:inputs: [1, 2, 3]
:layers: 0, 5
```

```{tv-attention}
:model: models/course.py:Patterned
:inputs: [1, 2, 3]
:tokens: [the, cat]
```

```{tv-attention}
:model: models/course.py:Patterned
:inputs: [1, 2, 3]
:heads: first
```
"""

#: what each directive of BAD (in order) is warned for: (subtype, words of the message)
BAD_WARNINGS = [
    ("limit", "3 attention maps over 10 tokens have 300 cells, over tensorviz_max_attention_cells"),
    ("bad_result", "the model computed no attention weights: no softmax over a [..., 3, 3] array"),
    ("bad_result", ":layers: 5 not in the model, which has 1 layer (numbered 0 to 0)"),
    ("bad_result", ":tokens: gives 2 labels for 3 positions"),
    ("option", ":heads: give numbers counted from 0, like 0, 2; got first"),
]


@pytest.mark.sphinx
def test_bad_input_gives_located_warnings_and_no_artifact(tmp_path: Path) -> None:
    """Too many cells, a model with no attention, a layer it lacks, labels that do not fit, an option
    that is no number: each a warning at its directive's line, the build finished, nothing stored."""
    src = copy_root("attention", tmp_path / "src")
    for page in ("course", "library", "nnx"):
        (src / f"{page}.md").unlink()
    write(src / "index.md", BAD)
    build = run_sphinx(src, confoverrides={"tensorviz_max_attention_cells": 200})
    assert build.statuscode == 0
    records = [r for r in warning_records(build.warnings) if "[tensorviz." in r]
    assert len(records) == len(BAD_WARNINGS), records
    for line, (subtype, words) in zip(directive_lines(src / "index.md", "tv-attention"), BAD_WARNINGS):
        (record,) = [r for r in records if r.startswith(f"{src / 'index.md'}:{line}:")]
        assert record.rstrip().endswith(f"[tensorviz.{subtype}]") and words in record, record
    assert not list(store_dir(src).glob("*.json")), "a failed figure left an artifact"


@pytest.mark.sphinx
def test_tensorviz_show_and_verify(built: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """``show`` names the hand-set heads' patterns; ``verify`` re-runs the page's figures and finds
    them within their dtype's tolerance."""
    from sphinx_tensorviz.cli import main

    patterned = artifact_of(built, "Patterned")["contentHash"]
    assert main(["show", patterned[:12], str(built["src"])]) == 0
    out = capsys.readouterr().out
    assert "attention, 1 layer x 3 heads over 10 tokens (float32)" in out
    assert f"head 0.2: {WORDS['induction']}" in out
    code = main(["verify", str(built["src"]), "--doc", "course"])
    out = capsys.readouterr().out
    assert code == 0 and "6 of 6 artifacts reproduced" in out, out
    assert out.count("float32 values in data.maps.weights within") == 5, out
    assert out.count("bfloat16 values in data.maps.weights within") == 1, out
