"""``tv-lens`` (issue 27): the logit lens of a causal language model, end to end.

One real build of ``tests/roots/test-lens`` is shared: unmodified transformers causal LMs from tiny
configs (Llama, GPT-2, Mistral, Qwen2, GPT-NeoX, OPT, Gemma 2), a model that names its pieces (a tied unembedding
given as a function), the course's induction model after a short recorded training (``:model:
@induction``) and a Flax NNX model. Each lens's last row is checked against the model's own
forward pass; bad input is a located warning; a rebuild with a fresh store writes the same bytes.
The words and the arithmetic are unit-tested on hand-made data.
"""

from __future__ import annotations

import html as html_lib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import (
    Build,
    copy_root,
    directive_lines,
    run_sphinx,
    store_dir,
    warning_records,
    without_generated_at,
    write,
)
from sphinx_tensorviz.features.lens.checks import consistency_errors
from sphinx_tensorviz.features.lens.data import lens_arrays, softmax
from sphinx_tensorviz.features.lens.describe import lens_alt, settled_layers, settled_sentence
from sphinx_tensorviz.store.artifacts import schema_errors

ROOT = Path(__file__).resolve().parent / "roots" / "test-lens"
COURSE_MODEL = Path(__file__).resolve().parents[1] / "lessons" / "models" / "induction.py"
LIBRARY = ("llama", "gpt2", "mistral", "qwen2", "gpt_neox", "opt")


# -- the arithmetic and the words, on hand-made data (no build) ---------------------------------------

def test_lens_arrays_take_the_next_token_and_a_stable_top_k() -> None:
    """Two layers over three tokens: the default target is the next input token, so the last position
    is left out; equal logits keep the lower id first."""
    logits = [np.array([[0.0, 0.0, 2.0], [1.0, 1.0, 1.0], [5.0, 0.0, 0.0]]),
              np.array([[0.0, 3.0, 0.0], [0.0, 0.0, 4.0], [0.0, 0.0, 0.0]])]
    chosen, top_ids, top_p, positions, targets = lens_arrays(logits, [0, 1, 2], None, 2)
    assert positions == [0, 1] and targets == [1, 2]
    e = np.exp(1.0)
    np.testing.assert_allclose(chosen, [[1 / (2 + e ** 2), 1 / 3], [e ** 3 / (e ** 3 + 2), e ** 4 / (e ** 4 + 2)]])
    assert top_ids.tolist() == [[[2, 0], [0, 1]], [[1, 0], [2, 0]]]
    np.testing.assert_allclose(top_p[0][1], [1 / 3, 1 / 3])
    chosen, _, _, positions, targets = lens_arrays(logits, [0, 1, 2], 0, 1)
    assert positions == [0, 1, 2] and targets == [0, 0, 0]
    np.testing.assert_allclose(chosen[:, 2], [softmax(logits[0][2])[0], 1 / 3])


def hand_data(tops: list[list[int]], targets: list[int]) -> dict[str, Any]:
    """A lens whose top-1 ids are ``tops`` (a row per layer); the target gets 0.6 where it is top-1."""
    return {"kind": "lens", "tokens": list("abcde"), "inputs": [0, 1, 2, 3, 4], "positions": [0, 1, 2, 3],
            "targets": targets, "residual": "blocks.{i}", "dtype": "float32",
            "probabilities": [[0.6 if top == t else 0.1 for top, t in zip(row, targets)] for row in tops],
            "topIds": [[[top, 9] for top in row] for row in tops],
            "topProbabilities": [[[0.6, 0.2] for _ in row] for row in tops]}


def test_the_words_say_from_which_layer_the_target_is_top_1() -> None:
    data = hand_data([[1, 5, 5, 4], [1, 2, 5, 4], [1, 2, 3, 7]], [1, 2, 3, 4])
    assert settled_layers(data) == [0, 1, 2, None]
    sentence = settled_sentence(data)
    assert sentence == ("The target is the top-1 prediction from layer 0 on at position 0; from layer 1 on at "
                        "position 1; from layer 2 on at position 2; it is not the top-1 after the last layer at "
                        "position 3.")
    assert sentence in lens_alt(data) and "the next input token" in lens_alt(data)
    assert "0.47 on average, from 0.1 (position 3) to 0.6 (position 0)" in lens_alt(data)
    assert consistency_errors(data) == []


def test_consistency_refuses_what_no_lens_computes() -> None:
    data = hand_data([[1, 2, 3, 4]], [1, 2, 3, 4])
    data["probabilities"][0][0] = 0.9  # above the top-1's 0.6
    assert any("does not descend" in p for p in consistency_errors(data))
    data = hand_data([[1, 2, 3, 4]], [1, 2, 3, 4])
    data["positions"] = [0, 1, 2, 7]
    assert any("not in the inputs" in p for p in consistency_errors(data))
    data = hand_data([[1, 2, 3, 4]], [1, 2, 3, 4])
    data["topIds"].append(data["topIds"][0])
    assert any("one row per layer" in p for p in consistency_errors(data))


@pytest.mark.execution
def test_a_jax_block_gets_its_class_back_however_the_call_ends() -> None:
    """The capture gives each named block a subclass for the call only: afterwards (and after a call
    that raised) the model is the author's again."""
    import jax.numpy as jnp

    from sphinx_tensorviz.features.lens.lens_jax import kept_outputs

    model = load(ROOT / "models" / "nnx_lm.py").TinyLM(seed=0)
    blocks = [model.layers[0], model.layers[1]]
    classes = [type(block) for block in blocks]
    with kept_outputs(blocks) as kept:
        assert all(type(block) is not cls for block, cls in zip(blocks, classes))  # watched while open
        model(jnp.asarray([[1, 2, 3]], dtype=jnp.int32))
    assert sorted(kept) == [0, 1] and kept[1].shape == (1, 3, 16)
    assert [type(block) for block in blocks] == classes
    with pytest.raises(Exception), kept_outputs(blocks):  # noqa: B017 - any failure of the model's call
        model(jnp.zeros((1, 3, 5)))
    assert [type(block) for block in blocks] == classes


# -- one real build -----------------------------------------------------------------------------------

def lens_root(dest: Path) -> Path:
    src = copy_root("lens", dest)
    shutil.copy(COURSE_MODEL, src / "models" / "induction.py")  # the course's model, as the lesson has it
    return src


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src = lens_root(tmp_path_factory.mktemp("lens") / "src")
    result = run_sphinx(src, warningiserror=True)
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    return {"build": result, "src": src, "artifacts": artifacts}


def artifact_of(built: dict[str, Any], function: str) -> dict[str, Any]:
    (found,) = [a for a in built["artifacts"] if a["data"]["kind"] == "lens" and a["request"]["function"] == function]
    return found


def load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"lens_test_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.sphinx
def test_the_root_builds_clean_under_w(built: dict[str, Any]) -> None:
    build: Build = built["build"]
    assert build.statuscode == 0 and build.tensorviz_warnings() == [], build.warnings
    assert build.summary == (12, 0, 0)  # eleven lenses and the training
    for artifact in built["artifacts"]:
        assert schema_errors(artifact) == [], artifact["request"]["function"]


@pytest.mark.sphinx
@pytest.mark.parametrize("factory", [*LIBRARY, "gemma2", "Named"])
def test_the_last_row_is_the_models_own_prediction(built: dict[str, Any], factory: str) -> None:
    """A direct forward pass of the same model (same seed, eval mode): softmax of its logits at each
    drawn position gives the last row's target probability and top-k."""
    import torch

    data = artifact_of(built, factory)["data"]
    module = load(built["src"] / "models" / ("named.py" if factory == "Named" else "hf.py"))
    model = getattr(module, factory)(seed=0).eval()
    with torch.no_grad():
        out = model(torch.tensor([data["inputs"]]))
    logits = (out if isinstance(out, torch.Tensor) else out.logits)[0].double()
    probs = torch.softmax(logits, -1)[data["positions"]]
    expected = probs[torch.arange(len(data["positions"])), torch.tensor(data["targets"])]
    np.testing.assert_allclose(data["probabilities"][-1], expected.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(data["topProbabilities"][-1], probs.sort(-1, descending=True).values[:, :len(
        data["topIds"][0][0])].numpy(), rtol=1e-4, atol=1e-6)
    layers = 3 if factory in ("gpt2", "Named") else 2
    assert len(data["probabilities"]) == layers and data["dtype"] == "float32"


@pytest.mark.sphinx
def test_targets_labels_and_pieces_are_recorded(built: dict[str, Any]) -> None:
    gpt2 = artifact_of(built, "gpt2")["data"]
    assert gpt2["tokens"] == list("abcdab") and len(gpt2["topIds"][0][0]) == 3
    assert gpt2["residual"] == "transformer.h.{i}" and gpt2["readOut"] == "transformer.ln_f then lm_head"
    assert artifact_of(built, "llama")["data"]["readOut"] == "model.norm then lm_head"
    assert artifact_of(built, "make_model")["data"]["readOut"] == "unembed"  # the course's model has no norm
    assert all(gpt2["vocabulary"][str(n)] == "abcdefghijklmnopqrstuvwxyz"[n] for n in gpt2["targets"])
    mistral = artifact_of(built, "mistral")["data"]
    assert mistral["positions"] == list(range(6)) and mistral["targets"] == [7] * 6
    neox = artifact_of(built, "gpt_neox")["data"]
    assert neox["targets"] == [7, 1, 9, 3] and neox["positions"] == [0, 1, 2, 3]
    named = artifact_of(built, "Named")
    assert named["data"]["readOut"] == "last_norm then models/named.py:tied_unembed"
    assert named["data"]["residual"] == "stack.{i}" and [c["passed"] for c in named["checks"]] == [True, True]
    # a check in a file of its own is hashed with the figure, so editing it runs the figure again
    assert set(named["request"]["files"]) == {"models/named.py", "models/claims.py"}


@pytest.mark.sphinx
def test_the_course_model_after_its_recorded_training(built: dict[str, Any]) -> None:
    artifact = artifact_of(built, "make_model")
    data = artifact["data"]
    assert artifact["request"]["options"]["trained"]["name"] == "induction"
    assert data["residual"] == "blocks.{i}" and len(data["probabilities"]) == 2
    assert data["tokens"][:3] == ["D", "O", "H"] and data["vocabulary"]["3"] == "D"
    page = html_lib.unescape(built["build"].html("course"))
    prompt, figure = page.index("Which layer will predict the second copy first?"), page.index('class="tv-svg-lens"')
    assert prompt < figure, "the prediction prompt comes before the figure"


@pytest.mark.sphinx
@pytest.mark.parametrize(("factory", "file", "residual"), [("TinyLM", "nnx_lm.py", "layers.{i}"),
                                                         ("TinyEqx", "eqx_lm.py", "blocks.{i}")])
def test_jax_models_that_name_their_pieces(built: dict[str, Any], factory: str, file: str, residual: str) -> None:
    """Flax NNX and Equinox: the named blocks' outputs, kept in one eager call, read out through the
    named norm and head (or function): the last row is the model's own softmax."""
    import jax.numpy as jnp

    artifact = artifact_of(built, factory)
    data = artifact["data"]
    assert artifact["request"]["backend"] == "jax" and data["residual"] == residual
    assert len(data["probabilities"]) == 2
    model = getattr(load(built["src"] / "models" / file), factory)(seed=0)
    logits = np.asarray(model(jnp.asarray([data["inputs"]], dtype=jnp.int32))[0], dtype=np.float64)
    probs = softmax(logits)[data["positions"]]
    np.testing.assert_allclose(data["probabilities"][-1], probs[np.arange(4), data["targets"]], rtol=1e-4, atol=1e-6)


@pytest.mark.sphinx
def test_the_page_draws_words_and_tables(built: dict[str, Any]) -> None:
    page = html_lib.unescape(built["build"].html("library"))
    grids = re.findall(r'<svg[^>]*class="tv-svg-lens".*?</svg>', page, re.S)
    assert len(grids) == 8 and all(g.count("tv-colour-bar") == 1 for g in grids)
    (desc,) = [d for d in re.findall(r"<desc[^>]*>(.*?)</desc>", page, re.S) if "3 layers by 5 positions (a b" in d]
    assert "the probability of the next input token" in desc and "After the last layer" in desc
    assert "read out through the model's final norm and unembedding (transformer.ln_f then lm_head)" in desc
    assert "the probability of token 7" in page
    assert page.count("Data: the top 5 tokens") == 7 and page.count("Data: the top 3 tokens") == 1
    assert "0:a \u2192 h" in page  # a row of the tables: position, its token, its target (id 7, labelled h)


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["latex", "text", "man"])
def test_latex_text_and_man_from_the_stored_artifacts(built: dict[str, Any], builder: str) -> None:
    build = run_sphinx(built["src"], builder, warningiserror=True)
    assert build.statuscode == 0 and build.summary == (0, 12, 0), build.warnings
    if builder == "text":
        text = (build.outdir / "library.txt").read_text("utf-8")
        assert "The target is" in text and "Data: the top 3 tokens" in text
    elif builder == "man":
        (page,) = build.outdir.glob("*.1")
        assert "Logit lens of" in page.read_text("utf-8") or "residual stream" in page.read_text("utf-8")
    else:
        assert list(build.outdir.glob("*.pdf")), "no PDF drawn for the lenses"


@pytest.mark.sphinx
def test_run_py_recomputes_the_probabilities(built: dict[str, Any]) -> None:
    for function in ("gpt2", "Named", "TinyLM", "TinyEqx"):
        folder = built["build"].outdir / "_tensorviz" / artifact_of(built, function)["contentHash"][:16]
        done = subprocess.run([sys.executable, "run.py", "--check"], cwd=folder, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["arrays"]["probabilities"]["ok"] and report["arrays"]["topProbabilities"]["ok"], report


@pytest.mark.sphinx
def test_tensorviz_show_and_verify(built: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    named = artifact_of(built, "Named")["contentHash"]
    assert main(["show", named[:12], str(built["src"])]) == 0
    out = capsys.readouterr().out
    assert "lens, 3 layers x 5 positions (float32)" in out and "After the last layer" in out
    code = main(["verify", str(built["src"]), "--doc", "library"])
    out = capsys.readouterr().out
    assert code == 0 and "8 of 8 artifacts reproduced" in out, out
    assert out.count("float32 values in data.probabilities within") == 8, out


@pytest.mark.sphinx
def test_a_rebuild_with_a_fresh_store_writes_the_same_bytes(built: dict[str, Any], tmp_path: Path) -> None:
    """Determinism: the library page executed again from nothing gives byte-identical artifacts, but
    for their time stamps and run facts."""
    src = lens_root(tmp_path / "src")
    for page in ("course", "nnx"):
        (src / f"{page}.md").unlink()
    write(src / "index.md", "# Lens\n\n```{toctree}\nlibrary\n```\n")
    build = run_sphinx(src, warningiserror=True)
    assert build.summary == (8, 0, 0), build.warnings
    first = {p.name: p for p in store_dir(built["src"]).glob("*.json")}
    again = sorted(store_dir(src).glob("*.json"))
    assert len(again) == 8
    for path in again:
        assert without_generated_at(path) == without_generated_at(first[path.name]), path.name


# -- bad input ----------------------------------------------------------------------------------------

BAD = """# Bad

```{tv-lens}
:model: models/bad.py:no_layers
:inputs: [1, 2, 3]
```

```{tv-lens}
:model: models/bad.py:no_unembedding
:inputs: [1, 2, 3]
```

```{tv-lens}
:model: models/named.py:Named
:inputs: [1, 2, 3]
:residual: blocks.{i}
:unembed: models/named.py:tied_unembed
```

```{tv-lens}
:model: models/hf.py:gpt2
:inputs: [1, 2, 3]
:target: 40
```

```{tv-lens}
:model: models/hf.py:gpt2
:inputs: [1, 2, 3]
:target: [1, 2]
```

```{tv-lens}
:model: models/hf.py:gpt2
:inputs: [1, 2, 3, 4, 5, 6, 7, 8]
```

```{tv-lens}
:model: models/nnx_lm.py:TinyLM
:backend: jax
:inputs: [1, 2, 3]
```

```{tv-lens}
:model: models/hf.py:gpt2
:inputs: [1, 2, 3]
:top-k: 50
```

```{tv-lens}
:model: models/hf.py:gemma2
:inputs: [1, 2, 3]
:call-args: {use_cache: false}
```
"""

BAD_MODELS = '''
import torch


class NoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(8, 4)
        self.head = torch.nn.Linear(4, 8)

    def forward(self, ids):
        return self.head(self.embed(ids))


class NoUnembedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(8, 4)
        self.layers = torch.nn.ModuleList([torch.nn.Identity(), torch.nn.Identity()])

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return x @ self.embed.weight.T


def no_layers():
    return NoLayers()


def no_unembedding():
    return NoUnembedding()
'''

#: what each directive of BAD (in order) is warned for: (subtype, words of the message)
BAD_WARNINGS = [
    ("bad_result", "no list of layers found (a ModuleList of blocks); name them with :residual:"),
    ("bad_result", "no unembedding found (get_output_embeddings(), or a last linear layer); name it with :unembed:"),
    ("bad_result", ":residual: 'blocks.{i}' names no module for layer 0"),
    ("bad_result", ":target: token 40 not in the model's vocabulary of 32"),
    ("bad_result", ":target: gives 2 tokens for 3 positions"),
    ("limit", "a logit lens of 3 layers over 7 positions has 21 cells, over tensorviz_max_lens_cells = 20"),
    ("option", "a JAX model names its pieces: :residual: (e.g. layers.{i}) and :unembed:"),
    ("option", "at most 20 tokens per cell; got 50"),
    ("bad_result", "the last layer read out through the final norm Gemma2RMSNorm and the unembedding Linear is "
                   "not the model's own logits"),
]


@pytest.mark.sphinx
def test_bad_input_gives_located_warnings_and_no_artifact(tmp_path: Path) -> None:
    """A missing piece names the option that names it; a target outside the vocabulary or the
    positions, too many cells, a JAX model without names, too long a top-k, a model whose logits are
    more than its found read-out (Gemma 2's soft-cap): each a warning at its directive's line, the
    build finished, nothing stored."""
    src = lens_root(tmp_path / "src")
    for page in ("library", "course", "nnx"):
        (src / f"{page}.md").unlink()
    write(src / "models" / "bad.py", BAD_MODELS)
    write(src / "index.md", BAD)
    build = run_sphinx(src, confoverrides={"tensorviz_max_lens_cells": 20})
    assert build.statuscode == 0
    records = [r for r in warning_records(build.warnings) if "[tensorviz." in r]
    assert len(records) == len(BAD_WARNINGS), records
    for line, (subtype, words) in zip(directive_lines(src / "index.md", "tv-lens"), BAD_WARNINGS):
        (record,) = [r for r in records if r.startswith(f"{src / 'index.md'}:{line}:")]
        assert record.rstrip().endswith(f"[tensorviz.{subtype}]") and words in record, record
    assert not list(store_dir(src).glob("*.json")), "a failed figure left an artifact"
