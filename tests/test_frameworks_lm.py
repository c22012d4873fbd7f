"""``:frameworks:`` on the language-model kinds: ``tv-lens`` and ``tv-patch`` in PyTorch and Flax NNX.

``roots/test-frameworks-lm`` holds a tiny causal language model written twice as a course author would
(embeddings, ``layers`` of pre-norm blocks with causal attention and a GELU MLP, a final norm and an
unembedding, with the same attribute names in both files), a logit lens and two patching figures
computed by both from the weights the PyTorch model makes, paired by the default name mapping. The pieces
the JAX side must name (``:residual:``, ``:final-norm:``, ``:unembed:``, ``:attention:``) are given once
and read by both frameworks. Then the port loses one residual add, and every figure says where.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, edit, run_sphinx, store_dir

#: the arrays each kind's comparison records (its ``expected_values``)
ARRAYS = {"lens": ("probabilities", "topProbabilities"), "patch": ("baselines", "effects")}
DISAGREES = re.compile(r"(\w+)\.md:(\d+): WARNING: tv-(lens|patch): JAX disagrees with PyTorch on (\w+): the largest "
                       r"difference is ([0-9.e+-]+) at index \[(\d+(?:, \d+)*)\] \(allowed for float32: .*"
                       r"\[tensorviz\.frameworks\]")


@pytest.fixture(scope="module")
def agreeing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The root built once, with -W: the two ports agree."""
    src = copy_root("frameworks-lm", tmp_path_factory.mktemp("frameworks-lm") / "src")
    return src, run_sphinx(src, warningiserror=True)


@pytest.mark.sphinx
def test_lens_and_patch_agree_across_frameworks_with_shared_weights(agreeing: tuple[Path, Any]) -> None:
    src, built = agreeing
    assert built.statuscode == 0, built.warnings
    # per figure: the shared weights, each framework, the comparison; the three figures name the same
    # model and seed, so their weights are one file
    assert built.summary == (12, 0, 0)
    assert len(list((store_dir(src) / "weights").glob("*.safetensors"))) == 1
    tolerance = r"within float32 tolerance \(\|difference\| ≤ [0-9.e-]+ \+ [0-9.e-]+ × \|value\|\)"
    lens, patch = built.html("lens"), built.html("patch")
    assert re.search(rf"PyTorch and JAX agree on probabilities, topProbabilities {tolerance}", lens)
    assert len(re.findall(rf"PyTorch and JAX agree on baselines, effects {tolerance}", patch)) == 2
    # each framework's code in its tab, the figure drawn once below them
    for page in (lens, patch):
        assert page.index('data-sync-id="torch"') < page.index('data-sync-id="jax"') < page.index("<figure")
        assert len(re.findall(r'<figure id="[^"]+" class="tv-figure', page)) == page.count('data-sync-id="jax"')


@pytest.mark.sphinx
def test_a_port_without_a_residual_add_fails_on_every_figure_with_the_array_and_index(
        agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    edit(src / "models/lm_nnx.py", "return x + self.mlp(self.norm2(x))", "return self.mlp(self.norm2(x))")
    built = run_sphinx(src)
    # only the JAX jobs and their comparisons ran again: the weights and PyTorch's figures are cached
    assert built.summary == (6, 6, 0)
    found = [m.groups() for m in map(DISAGREES.search, built.tensorviz_warnings()) if m]
    figures = {(page, int(line)) for page, line, *_ in found}
    assert figures == {("lens", 6), ("patch", 3), ("patch", 15)}, built.warnings
    for page, _, kind, array, difference, index in found:
        assert array in ARRAYS[kind] and float(difference) > 0
        # into the recorded array: [layer, position] (a top-k probability: [layer, position, rank]); a
        # baseline: [0] the clean, [1] the corrupted input's metric
        assert len(index.split(", ")) == {"baselines": 1, "topProbabilities": 3}.get(array, 2), index
    # every array the kind compares is named (all of them differ without the residual add)
    assert {(kind, array) for _, _, kind, array, *_ in found} == {(k, a) for k, names in ARRAYS.items() for a in names}
    assert "PyTorch and JAX disagree" in built.html("lens")
    assert run_sphinx(src, warningiserror=True).statuscode != 0  # -W fails, on every build
