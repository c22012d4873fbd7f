"""``:frameworks: torch, jax``: one figure computed in PyTorch and in JAX, with shared weights, compared.

``roots/test-frameworks`` holds three pairs written as a course author would: a layer-normed MLP with
GELU (PyTorch and Flax NNX), a convolution with a linear head (PyTorch and Flax NNX, NCHW and NHWC) and
attention scores after a layer norm (PyTorch and Equinox). Built for real (each framework in its own
worker, the weights made once by the PyTorch model and mapped into the JAX one); then each JAX port is
given one bug a port really gets (the tanh GELU, a transposed weight, a missing scale). The unit tests at
the top need no Sphinx and no framework.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import copy_root, edit, run_sphinx, store_dir, write
from offline_util import WITHOUT_FRAMEWORKS
from sphinx_tensorviz.execute.worker.frameworks_check import coarser, compare_array
from sphinx_tensorviz.execute.worker.loader import BadResult
from sphinx_tensorviz.execute.worker.weight_names import mapped_arrays, torch_name
from sphinx_tensorviz.read.frameworks import frameworks_option, weight_map_option

# -- the default name mapping, the comparison and the options (no framework) -----------------------------


def test_the_default_map_renames_and_transposes_as_each_layer_needs() -> None:
    rng = np.random.default_rng(0)
    torch = {"layers.0.fc.weight": rng.normal(size=(16, 8)), "layers.0.fc.bias": rng.normal(size=16),
             "norm.weight": rng.normal(size=8), "conv.weight": rng.normal(size=(4, 3, 2, 5)),
             "embed.weight": rng.normal(size=(10, 8))}
    nnx = {"layers.0.fc.kernel.value": (8, 16), "layers.0.fc.bias.value": (16,), "norm.scale.value": (8,),
           "conv.kernel.value": (2, 5, 3, 4), "embed.embedding.value": (10, 8)}
    mapped = mapped_arrays(torch, nnx)
    assert set(mapped) == set(nnx)
    np.testing.assert_array_equal(mapped["layers.0.fc.kernel.value"], torch["layers.0.fc.weight"].T)
    np.testing.assert_array_equal(mapped["norm.scale.value"], torch["norm.weight"])
    np.testing.assert_array_equal(mapped["embed.embedding.value"], torch["embed.weight"])
    # OIHW -> HWIO: the window first, then in, then out
    assert mapped["conv.kernel.value"][1, 4, 2, 3] == torch["conv.weight"][3, 2, 1, 4]
    # Equinox keeps PyTorch's names and layouts: the identity
    eqx = mapped_arrays(torch, {name: value.shape for name, value in torch.items()})
    np.testing.assert_array_equal(eqx["conv.weight"], torch["conv.weight"])
    assert torch_name("blocks.1.attn.kernel.value") == "blocks.1.attn.weight"


def test_an_unpaired_parameter_names_both_sides_leftovers_and_shapes() -> None:
    torch = {"fc1.weight": np.zeros((4, 3)), "fc1.bias": np.zeros(4), "out_proj.weight": np.zeros((2, 4))}
    jax = {"fc1.kernel.value": (3, 4), "fc1.bias.value": (4,), "head.kernel.value": (4, 2)}
    with pytest.raises(BadResult) as raised:
        mapped_arrays(torch, jax)
    message = str(raised.value)
    assert "left in the JAX model: head.kernel.value [4, 2]" in message
    assert "left in the PyTorch weights: out_proj.weight [2, 4]" in message and ":weight-map:" in message
    # the author's map pairs them, with the kernel's layout rule
    mapped = mapped_arrays(torch, jax, {"out_proj.weight": "head.kernel"})  # NNX's ``.value`` may be left out
    np.testing.assert_array_equal(mapped["head.kernel.value"], torch["out_proj.weight"].T)
    with pytest.raises(BadResult, match=r"fc1.weight \[4, 3\] does not fit the JAX parameter fc1.kernel.value \[4, 3\]"):
        mapped_arrays(torch, {**jax, "fc1.kernel.value": (4, 3)}, {"out_proj.weight": "head.kernel.value"})


def test_the_comparison_reports_the_largest_difference_and_where() -> None:
    first = np.linspace(-1, 1, 12).reshape(3, 4)
    close = first + 1e-7
    far = first.copy()
    far[2, 1] += 0.01
    far[0, 0] += 0.001
    agreeing = compare_array({"values": first.tolist(), "dtype": "float32"}, {"values": close.tolist(), "dtype": "float32"})
    assert agreeing["agree"] and agreeing["dtype"] == "float32"
    found = compare_array({"values": first.tolist(), "dtype": "float32"}, {"values": far.tolist(), "dtype": "float64"})
    assert not found["agree"] and found["index"] == [2, 1] and found["maxDiff"] == pytest.approx(0.01, rel=1e-6)
    assert found["dtype"] == "float32"  # the coarser dtype's tolerance applies
    shapes = compare_array({"values": first.tolist()}, {"values": first.T.tolist()})
    assert not shapes["agree"] and shapes["shapes"] == [[3, 4], [4, 3]]
    assert coarser("bfloat16", "float32") == "bfloat16" and coarser("int64", "int32") == "int64"


def test_the_options_refuse_what_cannot_be_compared() -> None:
    assert frameworks_option("torch, JAX") == ["torch", "jax"]
    for bad in ("torch", "torch, torch", "torch, numpy", "torch, mxnet"):
        with pytest.raises(ValueError):
            frameworks_option(bad)
    assert weight_map_option("maps.py:pairs") == "maps.py:pairs"
    assert weight_map_option("{fc.weight: dense.kernel}") == {"fc.weight": "dense.kernel"}


# -- real builds (PyTorch, Flax NNX, Equinox) ------------------------------------------------------------

#: one bug each, as a hand-written port gets it
BUGS = {
    "mlp": ("models/mlp_nnx.py", "approximate=False", "approximate=True"),  # tanh GELU for erf
    "conv": ("models/conv_nnx.py", "return self.head(features)",
             "return features @ self.head.kernel.value.T + self.head.bias.value"),  # a transposed weight
    "attention": ("models/scores_eqx.py", " / math.sqrt(x.shape[-1])", ""),  # the missing scale
}
FRAMEWORK_WARNING = re.compile(r"(\w+)\.md:\d+: WARNING: tv-graph: JAX disagrees with PyTorch on output: the largest "
                               r"difference is ([0-9.e+-]+) at index \[\d+\] \(allowed for float32: .*\[tensorviz\.frameworks\]")


@pytest.fixture(scope="module")
def agreeing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The root built once, with -W: every pair agrees."""
    src = copy_root("frameworks", tmp_path_factory.mktemp("frameworks") / "src")
    return src, run_sphinx(src, warningiserror=True)


@pytest.mark.sphinx
def test_agreeing_pairs_build_with_w_and_the_footer_says_so(agreeing: tuple[Path, Any]) -> None:
    src, built = agreeing
    assert built.statuscode == 0, built.warnings
    # per figure: the shared weights, each framework, the comparison
    assert built.summary == (12, 0, 0)
    for page in ("mlp", "conv", "attention"):
        footer = re.search(r"PyTorch and JAX agree on output within float32 tolerance \(\|difference\| ≤ [0-9.e-]+ \+ "
                           r"[0-9.e-]+ × \|value\|\)", built.html(page))
        assert footer, page
    assert len(list((store_dir(src) / "weights").glob("*.safetensors"))) == 3


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["text", "man"])
def test_text_and_man_get_both_listings_and_one_figure_with_the_agreement(
        agreeing: tuple[Path, Any], tmp_path: Path, builder: str) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    built = run_sphinx(src, builder, warningiserror=True)
    assert built.statuscode == 0, built.warnings
    text = (built.outdir / ("conv.txt" if builder == "text" else "tensorvizframeworkstests.1")).read_text("utf-8")
    if builder == "man":
        lower = text.lower()  # man's section titles are upper case
        text = text[lower.index("a convolution and a linear head"):lower.index("attention scores after")]
    listings = [text.index("nn.Conv2d(3, 4, kernel_size=3, padding=1)"), text.index("nnx.Conv(3, 4, kernel_size=(3, 3)")]
    assert text.index("PyTorch") < listings[0] < text.index("JAX") < listings[1]  # each under its name, in order
    words = " ".join(text.split())  # the writers wrap lines
    assert words.count("PyTorch and JAX agree on output within float32 tolerance") == 1  # one figure
    assert words.count("A convolution, computed in two frameworks") == 1


@pytest.mark.sphinx
def test_a_port_with_one_bug_fails_with_the_array_its_difference_and_where(
        agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    for path, old, new in BUGS.values():
        edit(src / path, old, new)
    built = run_sphinx(src)
    # only each JAX job and its comparison ran again: the weights and PyTorch's figures are cached
    assert built.summary == (6, 6, 0)
    found = {m.group(1): float(m.group(2)) for m in map(FRAMEWORK_WARNING.search, built.tensorviz_warnings()) if m}
    assert set(found) == set(BUGS), built.warnings
    assert all(difference > 0 for difference in found.values()), found
    assert "PyTorch and JAX disagree" in built.html("mlp")
    assert run_sphinx(src, warningiserror=True).statuscode != 0  # and -W fails the build, on every build


@pytest.mark.sphinx
def test_editing_the_pytorch_file_makes_new_weights_for_both(agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    edit(src / "models/conv_torch.py", "def make():", "def make():  # the same model, edited")
    built = run_sphinx(src, warningiserror=True)
    assert built.statuscode == 0, built.warnings
    assert built.summary == (4, 8, 0)  # conv's weights, both frameworks and the comparison


@pytest.mark.sphinx
def test_a_cache_only_build_needs_neither_framework(agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    shutil.rmtree(store_dir(src) / "weights")
    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-c", WITHOUT_FRAMEWORKS, "-W", "-b", "html", "-D",
                           "tensorviz_execution_mode=cache-only", str(src), str(out)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tensorviz: 0 executed, 12 cached, 0 failed" in done.stdout
    assert "PyTorch and JAX agree on output" in (out / "conv.html").read_text("utf-8")


#: pages added to the built root: names the default cannot pair (with and without the author's map),
#: trained weights from a file, and a heatmap (no model: each framework's function, no shared weights)
RENAMED_TORCH = '''
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.out_proj = nn.Linear(5, 3)

    def forward(self, x):
        return self.out_proj(self.fc(x).tanh())


def make():
    return Net()
'''
RENAMED_NNX = '''
import jax
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.fc = nnx.Linear(6, 5, rngs=rngs)
        self.head = nnx.Linear(5, 3, rngs=rngs)

    def __call__(self, x):
        return self.head(jax.numpy.tanh(self.fc(x)))


def make(seed=0):
    return Net(nnx.Rngs(seed))
'''
MAPS = '''
def pairs(torch_shapes, jax_shapes):
    return {name: name.replace("out_proj", "head").replace("weight", "kernel")
            for name in torch_shapes if name.startswith("out_proj.")}
'''
SCORES_TORCH = '''
import torch


def scores(width, tokens, seed):
    q = torch.linspace(-1, 1, tokens * width).reshape(tokens, width)
    return torch.softmax(q @ q.T / width ** 0.5, dim=-1)
'''
SCORES_JAX = '''
import jax.numpy as jnp
import jax


def scores(width, tokens, key):
    q = jnp.linspace(-1, 1, tokens * width).reshape(tokens, width)
    return jax.nn.softmax(q @ q.T / width ** 0.5, axis=-1)
'''


def graph_page(title: str, torch: str, jax: str, extra: str = "") -> str:
    return (f"# {title}\n\n```{{tv-graph}}\n:frameworks: torch, jax\n:torch: {torch}\n:jax: {jax}\n"
            f":inputs: [{{shape: [2, 6], fill: randn}}]\n{extra}:title: {title}\n```\n")


@pytest.mark.sphinx
def test_author_maps_trained_weights_and_a_heatmap(agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    from safetensors.numpy import load_file, save_file

    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    for name, text in {"renamed_torch.py": RENAMED_TORCH, "renamed_nnx.py": RENAMED_NNX, "maps.py": MAPS,
                       "heat_torch.py": SCORES_TORCH, "heat_jax.py": SCORES_JAX}.items():
        write(src / "models" / name, text)
    rng = np.random.default_rng(7)
    trained = {"norm.weight": rng.normal(size=8), "norm.bias": rng.normal(size=8), "fc1.weight": rng.normal(size=(16, 8)),
               "fc1.bias": rng.normal(size=16), "fc2.weight": rng.normal(size=(8, 16)), "fc2.bias": rng.normal(size=8),
               "proj.weight": rng.normal(size=(8, 8)), "proj.bias": rng.normal(size=8)}
    save_file({k: v.astype(np.float32) for k, v in trained.items()}, str(src / "trained.safetensors"))
    pages = {
        "unpaired": graph_page("Unpaired", "models/renamed_torch.py:make", "models/renamed_nnx.py:make"),
        "mapped": graph_page("Mapped", "models/renamed_torch.py:make", "models/renamed_nnx.py:make",
                             ":weight-map: {out_proj.weight: head.kernel, out_proj.bias: head.bias}\n:seed: 3\n"),
        "mapped-by-function": graph_page("Mapped by a function", "models/renamed_torch.py:make",
                                         "models/renamed_nnx.py:make", ":weight-map: models/maps.py:pairs\n:seed: 4\n"),
        "from-file": "# Trained\n\n```{tv-graph}\n:frameworks: torch, jax\n:torch: models/mlp_torch.py:make\n"
                     ":jax: models/mlp_nnx.py:make\n:weights: trained.safetensors\n"
                     ":inputs: [{shape: [3, 8], fill: randn}]\n:show: both\n```\n",
        "heatmap": "# Scores\n\n```{tv-heatmap}\n:frameworks: torch, jax\n:torch: models/heat_torch.py:scores\n"
                   ":jax: models/heat_jax.py:scores\n:inputs: {width: 4, tokens: 5}\n```\n",
    }
    for name, text in pages.items():
        write(src / f"{name}.md", text)
    edit(src / "index.md", "attention\n", "attention\n" + "\n".join(pages) + "\n")
    built = run_sphinx(src)
    warnings = built.tensorviz_warnings()
    unpaired = [w for w in warnings if w.startswith(str(src / "unpaired.md"))]
    assert any("left in the JAX model: head.bias.value [3], head.kernel.value [5, 3]; left in the PyTorch weights: "
               "out_proj.bias [3], out_proj.weight [3, 5]" in w and "[tensorviz.bad_result]" in w for w in unpaired), warnings
    assert not [w for w in warnings if "unpaired.md" not in w], warnings
    agreed = "PyTorch and JAX agree on"
    for page in ("mapped", "mapped-by-function", "from-file"):
        assert f"{agreed} output within float32 tolerance" in built.html(page), page
    assert f"{agreed} values within float32 tolerance" in built.html("heatmap")
    # the trained file is the one both loaded: its artifact lists its tensors, and the store holds it
    artifacts = [json.loads(p.read_text("utf-8")) for p in store_dir(src).glob("*.json")]
    shared = [a for a in artifacts if a["data"]["kind"] == "shared-weights" and a["request"]["options"].get("file")]
    assert [a["data"]["tensors"]["fc1.weight"] for a in shared] == [[16, 8]]
    kept = load_file(str(store_dir(src) / "weights" / f"{shared[0]['data']['file']['sha256']}.safetensors"))
    np.testing.assert_allclose(kept["proj.weight"], trained["proj.weight"].astype(np.float32))
    # :show: both draws each framework's figure, in its tab (the PyTorch one first)
    both = built.html("from-file")
    assert len(re.findall(r'<figure id="[^"]+" class="tv-figure', both)) == 2
    assert both.index('data-sync-id="torch"') < both.index("<figure") < both.index('data-sync-id="jax"') \
        < both.rindex("<figure")


@pytest.mark.sphinx
def test_tensorviz_verify_reproduces_every_job_of_the_figures(agreeing: tuple[Path, Any], tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(agreeing[0], src, ignore=shutil.ignore_patterns("_build"))
    verify = subprocess.run([sys.executable, "-m", "sphinx_tensorviz", "verify", str(src)], capture_output=True,
                            text=True, timeout=600)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "12 of 12 artifacts reproduced" in verify.stdout
    ok = [line for line in verify.stdout.splitlines() if line.startswith("ok ")]
    assert len(ok) == 12 and all(int(re.search(r"compared ([\d,]+) values?", line).group(1)) > 0 for line in ok), ok
    for what in ("tv-shared-weights", "tv-frameworks-check"):
        assert sum(what in line for line in ok) == 3, verify.stdout


@pytest.mark.sphinx
def test_tv_attention_compares_the_attention_weights(tmp_path: Path) -> None:
    """Another kind through the same options: one head's weights in PyTorch and Flax NNX (the embedding
    shared too), and a port without the scale, which fails on the array the kind records, ``weights``."""
    src = tmp_path / "src"
    models = src / "models"
    models.mkdir(parents=True)
    root = Path(__file__).parent / "roots" / "test-frameworks"
    shutil.copy(root / "conf.py", src / "conf.py")
    for name in ("head_torch.py", "head_nnx.py"):
        shutil.copy(root / "models" / name, models / name)
    unscaled = (models / "head_nnx.py").read_text("utf-8").replace(" / math.sqrt(x.shape[-1])", "")
    (models / "head_unscaled.py").write_text(unscaled, "utf-8")
    page = ("```{{tv-attention}}\n:frameworks: torch, jax\n:torch: models/head_torch.py:make\n:jax: models/{jax}:make\n"
            ":inputs: [2, 5, 1, 2, 5]\n:title: One head in two frameworks\n```\n")
    (src / "index.md").write_text("# Heads\n\n" + page.format(jax="head_nnx.py") + "\n" + page.format(jax="head_unscaled.py"),
                                  "utf-8")
    built = run_sphinx(src)
    warnings = built.tensorviz_warnings()
    assert len(warnings) == 1, warnings
    assert re.search(r"index\.md:11: WARNING: tv-attention: JAX disagrees with PyTorch on weights: the largest difference "
                     r"is [0-9.e+-]+ at index \[\d+(, \d+)*\] .*\[tensorviz\.frameworks\]", warnings[0]), warnings
    assert built.html("index").count("PyTorch and JAX agree on weights within float32 tolerance") == 1
