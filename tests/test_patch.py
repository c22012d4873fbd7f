"""``tv-patch`` (issue 27) end to end: real builds of ``tests/roots/test-patch``.

One build is shared: a model small enough to patch by hand (its one head restores everything, checked
by a claim), the four places to patch with a metric and labels given by functions, pieces named by
module pattern, unmodified transformers causal LMs from tiny configs (Llama, GPT-2, Mistral, Qwen2,
GPT-NeoX) and the course's induction model after a short training (``:model: @induction``). Bad input
(too many passes, baselines that do not differ, a model without the piece) is a located warning.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Build, copy_root, directive_lines, run_sphinx, store_dir, warning_records, write
from sphinx_tensorviz.store.artifacts import schema_errors

LESSON_MODEL = Path(__file__).resolve().parents[1] / "lessons" / "models" / "induction.py"
LIBRARY = ("llama", "gpt2", "mistral", "qwen2", "gpt_neox")

TRAINED = """# A trained model

```{tv-train}
:model: models/induction.py:make_model
:train: models/induction.py:train
:steps: 30
:snapshots: 0, 30
:seed: 0
:name: induction
```

```{tv-patch}
:model: @induction
:clean: [1, 2, 3, 4, 5, 1, 2, 3, 4]
:corrupted: [1, 2, 3, 4, 5, 1, 2, 3, 7]
:metric: logit-diff 5 1
:tokens: models/induction.py:letters
:patch: heads
```
"""


def with_trained_page(src: Path) -> Path:
    """The root plus the course's own induction model (copied, so the lesson's file is the one tested)."""
    shutil.copy(LESSON_MODEL, src / "models" / "induction.py")
    write(src / "trained.md", TRAINED)
    write(src / "index.md", "# Activation patching\n\n```{toctree}\ncourse\nlibrary\nnnx\ntrained\n```\n")
    return src


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = with_trained_page(copy_root("patch", tmp_path_factory.mktemp("patch") / "src"))
    result = run_sphinx(src, warningiserror=True)
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    return {"build": result, "src": src, "artifacts": [a for a in artifacts if a["data"]["kind"] == "patch"]}


def artifacts_of(built: dict[str, Any], function: str, **options: Any) -> list[dict[str, Any]]:
    return [a for a in built["artifacts"] if a["request"]["function"] == function
            and all(a["request"]["options"].get(k) == v for k, v in options.items())]


@pytest.mark.sphinx
def test_the_root_builds_clean_under_w(built: dict[str, Any]) -> None:
    build: Build = built["build"]
    assert build.statuscode == 0 and build.tensorviz_warnings() == [], build.warnings
    assert len(built["artifacts"]) == 6 + 2 * len(LIBRARY) + 3 + 1
    for artifact in built["artifacts"]:
        assert schema_errors(artifact) == [], artifact["request"]["function"]


@pytest.mark.sphinx
def test_the_only_head_restores_everything_and_the_claim_says_so(built: dict[str, Any]) -> None:
    (artifact,) = artifacts_of(built, "make_model", patch="heads", model_args={"layers": 1, "heads": 1})
    data = artifact["data"]
    assert data["rows"] == ["layer 0"] and data["columns"] == ["head 0"]
    assert data["effects"][0][0] == pytest.approx(1.0, abs=1e-4)
    assert [(c["name"], c["passed"]) for c in artifact["checks"]] == [("one_head_restores_everything", True)]
    page = built["build"].html("course")
    assert "patching head 0.0 restores 100% of the logit difference of token 3 over token 7" in page
    # the prediction comes before the figure; the caption holds both baselines
    assert page.index("How much of the logit difference") < page.index('class="tv-svg-heatmap"')
    caption = f"The only head (the logit difference of token 3 over token 7: clean {_fmt(data['clean'])}, " \
              f"corrupted {_fmt(data['corrupted'])})"
    assert caption in page


def _fmt(value: float) -> str:
    from sphinx_tensorviz.render.numbers import fmt

    return fmt(value)


@pytest.mark.sphinx
@pytest.mark.parametrize("patch", ["residual", "attn-out", "mlp-out"])
def test_each_place_is_patched_at_every_layer_and_position(built: dict[str, Any], patch: str) -> None:
    (artifact,) = artifacts_of(built, "make_model", patch=patch)
    data = artifact["data"]
    assert data["rows"] == ["layer 0", "layer 1"]
    if patch == "residual":  # labelled by the function, for each input
        assert data["columns"] == ["0 B", "1 E/J", "2 C", "3 G", "4 B", "5 E"]
        assert data["effects"][1][5] == pytest.approx(1.0, abs=1e-4)  # the last residual, last position
        # a claim from another course file, hashed with the figure: editing it runs the figure again
        assert [(c["name"], c["passed"]) for c in artifact["checks"]] == [
            ("models/claims.py:last_residual_restores_all", True)]
        assert "models/claims.py" in artifact["request"]["files"]
        assert "metricTokens" not in data  # a course metric names no tokens
    elif patch == "attn-out":  # a list labels the clean input; the corrupted id where it differs
        assert data["columns"] == ["0 a", "1 b/9", "2 c", "3 d", "4 a", "5 b"]
    assert all(row[0] == pytest.approx(0.0, abs=1e-4) for row in data["effects"])  # the same token in both


@pytest.mark.sphinx
def test_named_pieces_patch_what_the_search_finds(built: dict[str, Any]) -> None:
    """``:residual:`` and ``:head-input:`` patterns reach the modules the search finds: same effects."""
    found, named = sorted(artifacts_of(built, "make_model", patch="heads", model_args={"layers": 2, "heads": 2}),
                          key=lambda a: "head_input" in a["request"]["options"])
    assert named["request"]["options"]["head_input"] == "blocks.{i}.attn.out"
    assert named["data"]["columns"] == found["data"]["columns"] == ["head 0", "head 1"]
    assert named["data"]["effects"] == found["data"]["effects"]  # the same modules, the same runs


@pytest.mark.sphinx
@pytest.mark.parametrize("factory", LIBRARY)
def test_library_models_patch_every_head_and_position(built: dict[str, Any], factory: str) -> None:
    (heads,) = artifacts_of(built, factory, patch="heads")
    (residual,) = artifacts_of(built, factory, patch="residual")
    assert heads["data"]["columns"] == ["head 0", "head 1"] and len(heads["data"]["effects"]) == 2
    assert heads["data"]["clean"] == residual["data"]["clean"]
    assert residual["data"]["effects"][-1][-1] == pytest.approx(1.0, abs=1e-3)
    assert residual["data"]["dtype"] == "float32"


@pytest.mark.sphinx
def test_a_flax_nnx_model_that_names_its_pieces_is_patched(built: dict[str, Any]) -> None:
    """JAX: the named modules are swapped for one eager forward pass each; the last residual at the
    last position still restores everything, and each head of each layer has its cell."""
    found = {a["request"]["options"]["patch"]: a["data"] for a in artifacts_of(built, "TinyLM")}
    assert sorted(found) == ["heads", "mlp-out", "residual"]
    assert found["heads"]["columns"] == ["head 0", "head 1"] and len(found["heads"]["effects"]) == 2
    assert found["residual"]["effects"][-1][-1] == pytest.approx(1.0, abs=1e-4)
    assert all(row[0] == pytest.approx(0.0, abs=1e-4) for row in found["mlp-out"]["effects"])
    assert found["heads"]["dtype"] == "float32"


@pytest.mark.sphinx
def test_the_trained_course_model_is_patched(built: dict[str, Any]) -> None:
    (artifact,) = artifacts_of(built, "make_model", patch="heads", clean=[1, 2, 3, 4, 5, 1, 2, 3, 4])
    assert artifact["request"]["options"]["trained"]["step"] == 30
    assert [len(row) for row in artifact["data"]["effects"]] == [2, 2]
    assert artifact["data"]["metricTokens"] == ["F", "B"]  # logit-diff 5 1, labelled by letters(ids)
    assert "Activation patching of each attention head" in built["build"].html("trained")


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["latex", "text"])
def test_latex_and_text_from_the_stored_artifacts(built: dict[str, Any], builder: str) -> None:
    """Every builder's fallback: a PDF per heatmap for LaTeX; the words and the table in text."""
    build = run_sphinx(built["src"], builder, warningiserror=True)
    assert build.statuscode == 0, build.warnings
    if builder == "text":
        text = (build.outdir / "course.txt").read_text("utf-8")
        assert "patching head 0.0 restores 100% of the logit difference" in text and "layer \\ head" in text
        assert text.index("How much of the logit difference") < text.index("Figure: The only head")
    else:
        assert len(list(build.outdir.glob("*.pdf"))) >= 6, "no PDF drawn for the heatmaps"


@pytest.mark.sphinx
def test_run_py_recomputes_the_effects(built: dict[str, Any]) -> None:
    """``run.py`` carries the piece finder and the patching: it recomputes the baselines and effects, with
    a metric of the course (``file.py:function``) as with the built-in one."""
    chosen = [*artifacts_of(built, "make_model", patch="residual"), *artifacts_of(built, "gpt2", patch="heads"),
              *artifacts_of(built, "TinyLM", patch="heads")]
    assert chosen[0]["request"]["options"]["metric"] == "models/tiny.py:last_logit_gap"
    for artifact in chosen:
        folder = built["build"].outdir / "_tensorviz" / artifact["contentHash"][:16]
        done = subprocess.run([sys.executable, "run.py", "--check"], cwd=folder, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["arrays"]["effects"]["ok"] and report["arrays"]["baselines"]["ok"], report


@pytest.mark.sphinx
def test_tensorviz_show_and_verify(built: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    (one,) = artifacts_of(built, "make_model", patch="heads", model_args={"layers": 1, "heads": 1})
    assert main(["show", one["contentHash"][:12], str(built["src"])]) == 0
    out = capsys.readouterr().out
    assert "patch heads, 1 x 1 (float32)" in out and "patching head 0.0 restores 100%" in out
    code = main(["verify", str(built["src"]), "--doc", "course"])
    out = capsys.readouterr().out
    assert code == 0 and "6 of 6 artifacts reproduced" in out, out


# -- determinism --------------------------------------------------------------------------------------

@pytest.mark.sphinx
def test_two_runs_give_identical_artifacts(tmp_path: Path) -> None:
    """Batched patching is deterministic, PyTorch and JAX alike: the store deleted, the same figures are
    recorded byte for byte (apart from the time stamps and the run's measurements)."""
    from conftest import artifact_files, without_generated_at

    src = copy_root("patch", tmp_path / "src")
    (src / "library.md").unlink()
    write(src / "index.md", "# Patching\n\n```{toctree}\ncourse\nnnx\n```\n")
    assert run_sphinx(src, warningiserror=True).statuscode == 0
    before = {h: without_generated_at(p) for h, p in artifact_files(src).items()}
    shutil.rmtree(store_dir(src))
    shutil.rmtree(src / "_build")
    assert run_sphinx(src, warningiserror=True).statuscode == 0
    after = {h: without_generated_at(p) for h, p in artifact_files(src).items()}
    assert len(before) == 6 + 3 and after == before


# -- bad input ----------------------------------------------------------------------------------------

BAD = """# Bad

```{tv-patch}
:model: models/tiny.py:make_model
:model-args: {layers: 2, heads: 2}
:clean: [1, 4, 2, 6, 1, 4]
:corrupted: [1, 9, 2, 6, 1, 4]
:metric: logit-diff 3 7
:patch: residual
```

```{tv-patch}
:model: models/tiny.py:make_model
:clean: [1, 4, 2, 6, 1, 4]
:corrupted: [1, 4, 2, 6, 1, 4]
:metric: logit-diff 3 7
:patch: heads
```

```{tv-patch}
:model: models/tiny.py:make_model
:clean: [1, 4, 2, 6, 1, 4]
:corrupted: [1, 9, 2, 6, 1, 4]
:metric: logit-diff 3 7
:patch: mlp-out
```

```{tv-patch}
:model: models/tiny.py:make_model
:clean: [1, 4, 2, 6, 1, 4]
:corrupted: [1, 9, 2, 6]
:metric: logit-diff 3 7
```

```{tv-patch}
:model: models/tiny.py:make_model
:clean: [1, 4, 2, 6, 1, 4]
:corrupted: [1, 9, 2, 6, 1, 4]
:metric: logit-diff 3
```
"""

#: what each directive of BAD (in order) is warned for: (subtype, words of the message)
BAD_WARNINGS = [
    ("limit", "patching residual over 2 layers x 6 positions needs 12 patched forward passes, over "
              "tensorviz_max_patch_passes = 10; nothing was run"),
    ("bad_result", "the clean and corrupted inputs give (nearly) the same metric"),
    ("bad_result", "layer 0 has no mlp-out to patch (found no mlp module); name it with :mlp:"),
    ("option", ":clean: has 6 tokens and :corrupted: 4"),
    ("option", ":metric: give logit-diff and two token ids, like logit-diff 3 5"),
]


@pytest.mark.sphinx
def test_bad_input_gives_located_warnings_and_no_artifact(tmp_path: Path) -> None:
    """Too many passes, baselines with nothing between them, a piece the model lacks, inputs of two
    lengths, a metric without its second token: each a warning at its directive's line, the build
    finished, nothing stored."""
    src = copy_root("patch", tmp_path / "src")
    for page in ("course", "library", "nnx"):
        (src / f"{page}.md").unlink()
    write(src / "index.md", BAD)
    build = run_sphinx(src, confoverrides={"tensorviz_max_patch_passes": 10})
    assert build.statuscode == 0
    records = [r for r in warning_records(build.warnings) if "[tensorviz." in r]
    assert len(records) == len(BAD_WARNINGS), records
    for line, (subtype, words) in zip(directive_lines(src / "index.md", "tv-patch"), BAD_WARNINGS):
        (record,) = [r for r in records if r.startswith(f"{src / 'index.md'}:{line}:")]
        assert record.rstrip().endswith(f"[tensorviz.{subtype}]") and words in record, record
    assert not list(store_dir(src).glob("*.json")), "a failed figure left an artifact"
    assert run_sphinx(src, warningiserror=True, freshenv=True).statuscode != 0  # fails under -W
