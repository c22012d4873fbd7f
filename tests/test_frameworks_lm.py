"""``:frameworks:`` on the language-model kinds: ``tv-lens`` and ``tv-patch`` in PyTorch and Flax NNX.

``roots/test-frameworks-lm`` holds a tiny causal language model written twice as a course author would
(embeddings, ``layers`` of pre-norm blocks with causal attention and a GELU MLP, a final norm and an
unembedding, with the same attribute names in both files), a logit lens and two patching figures
computed by both from the weights the PyTorch model makes, paired by the default name mapping. The pieces
the JAX side must name (``:residual:``, ``:final-norm:``, ``:unembed:``, ``:attention:``) are given once
and read by both frameworks. Then the port loses one residual add, and every figure says where. A page
draws ``tv-activations`` from a ``tv-graph`` with ``:frameworks:`` (an MLP in both), whose checkpoints
are compared too. The unit tests at the top check how the kinds' arrays are compared (no framework).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import copy_root, edit, run_sphinx, store_dir
from sphinx_tensorviz.execute.frameworks_points import framework_job_points
from sphinx_tensorviz.execute.worker.frameworks_check import compare_array
from sphinx_tensorviz.features.patch.data import normalised
from sphinx_tensorviz.render.frameworks import disagreement

#: the arrays each kind's comparison records (its ``expected_values``)
ARRAYS = {"lens": ("probabilities", "top1", "topProbabilities"), "patch": ("baselines", "effects")}
DISAGREES = re.compile(r"(\w+)\.md:(\d+): WARNING: tv-(lens|patch): JAX disagrees with PyTorch on (\w+): the largest "
                       r"difference is ([0-9.e+-]+) at index \[(\d+(?:, \d+)*)\] \(allowed for float32: .*"
                       r"\[tensorviz\.frameworks\]")


# -- what each kind compares (the real kinds' values, no framework) ---------------------------------------


def compared(*artifacts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each array the comparison job records for two frameworks' artifacts, as it reads them."""
    store = {f"{n:064x}": artifact for n, artifact in enumerate(artifacts)}
    first, other = framework_job_points({"frameworks": [["torch", f"{0:064x}"], ["jax", f"{1:064x}"]]}, store.__getitem__)
    return {name: compare_array(first["data"][name], other["data"][name]) for name in first["data"]}


def patch_artifact(clean: float, corrupted: float, patched: list[list[float]]) -> dict[str, Any]:
    data = {"kind": "patch", "clean": clean, "corrupted": corrupted, "effects": normalised(patched, clean, corrupted),
            "dtype": "float32"}
    return {"request": {"backend": "torch"}, "data": data}


def test_patching_effects_are_compared_on_the_scale_of_their_metrics() -> None:
    """Two ports whose metrics (about 10) differ by float32 rounding, with a gap of 0.05 between the clean
    and the corrupted one: each effect carries that rounding divided by the gap, and still agrees."""
    rng = np.random.default_rng(0)
    clean, corrupted = 10.05, 10.0
    patched = (corrupted + rng.uniform(0, 0.05, size=(3, 5))).astype(np.float32).astype(float)
    rounded = patched * (1 + rng.choice([-4, 4], size=patched.shape) * np.finfo(np.float32).eps)
    ports = patch_artifact(clean, corrupted, patched.tolist()), patch_artifact(clean, corrupted, rounded.tolist())
    found = compared(*ports)
    assert found["effects"]["agree"] and found["baselines"]["agree"], found
    assert found["effects"]["maxDiff"] > 1e-5  # larger than float32's rounding of an effect near 1
    wrong = patched.copy()
    wrong[2, 3] += 0.002  # a port that patches one place differently
    found = compared(ports[0], patch_artifact(clean, corrupted, wrong.tolist()))
    assert not found["effects"]["agree"] and found["effects"]["index"] == [2, 3], found


def lens_artifact(top_ids: list[list[list[int]]], top_probabilities: list[list[list[float]]]) -> dict[str, Any]:
    chosen = [[cell[0] for cell in row] for row in top_probabilities]
    data = {"kind": "lens", "probabilities": chosen, "topIds": top_ids, "topProbabilities": top_probabilities,
            "dtype": "float32"}
    return {"request": {"backend": "torch"}, "data": data}


def test_the_lens_compares_each_clear_top1_token_and_lets_near_ties_fall_either_way() -> None:
    probabilities = [[[0.5, 0.3], [0.4, 0.4 - 1e-7], [0.6, 0.2]]]  # clear, a near tie, clear
    first = lens_artifact([[[3, 1], [2, 5], [7, 4]]], probabilities)
    tie_swapped = lens_artifact([[[3, 1], [5, 2], [7, 4]]], probabilities)
    found = compared(first, tie_swapped)
    assert all(record["agree"] for record in found.values()), found
    # the same sorted probabilities, two tokens swapped where the ranking is clear: only the ids show it
    swapped = compared(first, lens_artifact([[[3, 1], [2, 5], [4, 7]]], probabilities))
    assert swapped["topProbabilities"]["agree"] and swapped["probabilities"]["agree"]
    assert not swapped["top1"]["agree"] and swapped["top1"]["index"] == [0, 2], swapped
    # the warning says where, without a tolerance that means nothing for a token id
    assert disagreement("PyTorch", "JAX", {"name": "top1", **swapped["top1"]}) == (
        "JAX disagrees with PyTorch on top1: they differ at index [0, 2] (int64, compared exactly)")


@pytest.fixture(scope="module")
def agreeing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The root built once, with -W: the two ports agree."""
    src = copy_root("frameworks-lm", tmp_path_factory.mktemp("frameworks-lm") / "src")
    return src, run_sphinx(src, warningiserror=True)


@pytest.mark.sphinx
def test_lens_and_patch_agree_across_frameworks_with_shared_weights(agreeing: tuple[Path, Any]) -> None:
    src, built = agreeing
    assert built.statuscode == 0, built.warnings
    # per figure: the shared weights, each framework, the comparison; the three language-model figures
    # name the same model and seed, so their weights are one file (and the MLP's another)
    assert built.summary == (16, 0, 0)
    assert len(list((store_dir(src) / "weights").glob("*.safetensors"))) == 2
    tolerance = r"within float32 tolerance \(\|difference\| ≤ [0-9.e-]+ \+ [0-9.e-]+ × \|value\|\)"
    lens, patch = built.html("lens"), built.html("patch")
    assert re.search(rf"PyTorch and JAX agree on probabilities, top1, topProbabilities {tolerance}", lens)
    assert len(re.findall(rf"PyTorch and JAX agree on baselines, effects {tolerance}", patch)) == 2
    # tv-activations draws the graph's checkpoints, and both frameworks' checkpoints were compared
    activations = built.html("activations")
    assert 'class="tv-activations"' in activations and activations.count("fc1") >= 2
    assert re.search(rf"PyTorch and JAX agree on activations\[fc1\], activations\[fc2\], output {tolerance}",
                     activations)
    # each framework's code in its tab, the figure drawn once below them
    for page in (lens, patch, activations):
        assert page.index('data-sync-id="torch"') < page.index('data-sync-id="jax"') < page.index("<figure")
        assert len(re.findall(r'<figure id="[^"]+" class="tv-figure', page)) == page.count('data-sync-id="jax"')


@pytest.mark.sphinx
def test_a_port_without_a_residual_add_fails_on_every_figure_with_the_array_and_index(
        agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    edit(src / "models/lm_nnx.py", "return x + self.mlp(self.norm2(x))", "return self.mlp(self.norm2(x))")
    edit(src / "models/mlp_nnx.py", "approximate=False", "approximate=True")  # the tanh GELU, after fc1
    built = run_sphinx(src)
    # only the JAX jobs and their comparisons ran again: the weights and PyTorch's figures are cached
    assert built.summary == (8, 8, 0)
    graph = [w for w in built.tensorviz_warnings() if "activations.md" in w]
    assert [re.search(r"on (\S+):", w).group(1) for w in graph] == ["activations[fc2]", "output"], graph
    found = [m.groups() for m in map(DISAGREES.search, built.tensorviz_warnings()) if m]
    figures = {(page, int(line)) for page, line, *_ in found}
    assert figures == {("lens", 6), ("patch", 3), ("patch", 15)}, built.warnings
    for page, _, kind, array, difference, index in found:
        assert array in ARRAYS[kind] and float(difference) > 0
        # into the recorded array: [layer, position] (a top-k probability: [layer, position, rank]); a
        # baseline: [0] the clean, [1] the corrupted input's metric
        assert len(index.split(", ")) == {"baselines": 1, "topProbabilities": 3}.get(array, 2), index
    # every probability and metric array differs without the residual add (the top-1 tokens may not)
    named = {(kind, array) for _, _, kind, array, *_ in found}
    assert named >= {("lens", "probabilities"), ("lens", "topProbabilities"), ("patch", "baselines"),
                     ("patch", "effects")}, named
    assert "PyTorch and JAX disagree" in built.html("lens")
    assert run_sphinx(src, warningiserror=True).statuscode != 0  # -W fails, on every build
