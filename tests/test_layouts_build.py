"""A real build of what a result or a checkpoint *is* (issue 24): JAX results that are pytrees,
channels x length and attention heads read off the producing op, and a complex heatmap.

Real PyTorch, JAX and Equinox code runs in the build's workers (tests/roots/test-layouts).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_graph_build import Build, artifacts_by_function, copy_root, parse_html, sphinx_build

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("equinox")

pytestmark = pytest.mark.sphinx


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    srcdir = copy_root("test-layouts", tmp_path_factory)
    return sphinx_build(srcdir, srcdir.parent / "html", fresh=True)


def fence_line(page: Path, directive: str, nth: int = 0) -> int:
    lines = [i for i, text in enumerate(page.read_text("utf-8").splitlines(), start=1)
             if text.startswith(f"```{{{directive}}}")]
    return lines[nth]


def checkpoints(built: Build, page: str) -> dict[str, tuple[str, str]]:
    """Checkpoint name -> (drawn layout, its label), from the page."""
    dom = parse_html(built.page(page))
    found = {}
    for box in dom.find_all("div", cls="tv-checkpoint"):
        label = box.find("p", cls="tv-checkpoint-label").text()
        found[box.attrs["data-checkpoint"]] = (box.attrs["data-layout"], label)
    return found


def test_only_the_complex_result_and_the_ambiguous_softmax_warn_each_at_its_directive(built: Build) -> None:
    complex_page = built.srcdir / "complex.md"
    torch_page = built.srcdir / "torch-layouts.md"
    expected = [
        ("complex.md", fence_line(complex_page, "tv-heatmap"), "tensorviz.bad_result"),
        ("complex.md", fence_line(complex_page, "tv-heatmap", 2), "tensorviz.bad_result"),  # each point
        ("complex.md", fence_line(complex_page, "tv-heatmap", 2), "tensorviz.bad_result"),
        ("torch-layouts.md", fence_line(torch_page, "tv-activations", 2), "tensorviz.layout"),
        ("torch-layouts.md", fence_line(torch_page, "tv-activations", 3), "tensorviz.bad_result"),
        ("torch-layouts.md", fence_line(torch_page, "tv-activations", 4), "tensorviz.layout"),  # a raw input
        ("jax-results.md", fence_line(built.srcdir / "jax-results.md", "tv-activations", 1), "tensorviz.layout"),
    ]
    got = [(Path(w.path or "").name, w.line, w.kind) for w in built.warnings]
    assert sorted(got) == sorted(expected), built.raw_warnings
    by_page = {(Path(w.path or "").name, w.kind): w.message for w in built.warnings}
    heatmaps = [w.message for w in built.warnings if Path(w.path or "").name == "complex.md"]
    assert all("complex (complex128): only its real part is drawn" in m for m in heatmaps)
    assert sum("at turns = 1:" in m for m in heatmaps) == sum("at turns = 2:" in m for m in heatmaps) == 1, heatmaps
    assert "'fft_0' is complex (complex64): only its real part is drawn" in \
        by_page["torch-layouts.md", "tensorviz.bad_result"]
    layouts = [w.message for w in built.warnings if w.kind == "tensorviz.layout"]
    assert any("softmax_1" in m and "batch x T x T or heads" in m for m in layouts), layouts


def test_a_complex_heatmap_says_it_shows_the_real_part(built: Build) -> None:
    html = built.page("complex")
    assert html.count("its real part only") == 2  # under the FFT and the phase sweep, not under abs()
    artifacts = [json.loads(p.read_text("utf-8")) for p in (built.srcdir / "tensorviz_artifacts").glob("*.json")]
    heatmaps = [a["data"] for a in artifacts if a["data"]["kind"] == "heatmap"]
    assert sorted(d.get("complexPart", "") for d in heatmaps) == ["", "real", "real", "real"]
    fft = next(d for d in heatmaps if d.get("complexPart") and len(d["values"]) == 4)
    assert fft["values"][1][1] == pytest.approx(0.0, abs=1e-9) and fft["values"][0][0] == pytest.approx(1.0)


def test_a_complex_checkpoint_says_it_shows_the_real_part(built: Build) -> None:
    layout, _ = checkpoints(built, "torch-layouts")["fft_0"]
    box = next(b for b in parse_html(built.page("torch-layouts")).find_all("div", cls="tv-checkpoint")
               if b.attrs["data-checkpoint"] == "fft_0")
    assert layout == "tokens" and "the real part of complex values" in box.find("p", cls="tv-checkpoint-metrics").text()


def test_jax_pytree_results_are_named_outputs(built: Build) -> None:
    artifacts = artifacts_by_function(built.srcdir)
    expected = {"pair": ["output.0", "output.1"], "running_sum": ["output.0", "output.1"],
                "losses": ["output.aux.loss", "output.logits"]}
    for function, ids in expected.items():
        data = artifacts[function]["data"]
        assert [o["id"] for o in data["outputs"]] == ids, function
        assert [n["id"] for n in data["layers"] if n["kind"] == "output"] == ids, function
    assert artifacts["pair"]["data"]["output"]["shape"] == []  # the first array: x.sum()
    assert artifacts["losses"]["data"]["output"]["shape"] == []  # aux.loss sorts before logits
    dom = parse_html(built.page("jax-results"))
    drawn = {g.attrs["data-node"] for g in dom.find_all("g") if "tv-node" in g.classes}
    assert {"output.0", "output.1", "output.aux.loss", "output.logits"} <= drawn


def test_downloaded_run_py_of_a_tuple_result_checks_its_output(built: Build, tmp_path: Path) -> None:
    folders = [p.parent for p in (built.outdir / "_tensorviz").glob("*/run.py")]
    folder = next(f for f in folders
                  if json.loads((f / "artifact.json").read_text("utf-8"))["request"]["function"] == "pair")
    copy = tmp_path / "run"
    shutil.copytree(folder, copy)
    done = subprocess.run([sys.executable, "run.py", "--check"], cwd=copy, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert '"output"' in done.stdout


def test_equinox_attention_weights_are_drawn_as_heads(built: Build) -> None:
    layout, label = checkpoints(built, "jax-results")["att.div_1"]
    assert layout == "heads" and "4 heads of 6×6" in label and "features" not in label


def test_torch_1d_conv_norm_relu_and_functional_conv_are_channels_by_length(built: Build) -> None:
    found = checkpoints(built, "torch-layouts")
    # F.conv1d pads by 3 (23 positions); the slice back to 20 keeps what the axes are
    for name, length in (("block", 20), ("act", 20), ("conv1d_0", 23), ("relu_0", 20), ("block.0", 20)):
        layout, label = found[name]
        assert layout == "channels-length", (name, label)
        assert f"7 channels × length {length}" in label and "feature" not in label, (name, label)
    layout, label = found["softmax_0"]
    assert layout == "heads" and "4 heads of 5×5" in label
    assert "softmax_1" not in found  # ambiguous: a located warning, not a strip labelled "token 4"
    dom = parse_html(built.page("torch-layouts"))
    svg = next(b for b in dom.find_all("div", cls="tv-checkpoint") if b.attrs["data-checkpoint"] == "relu_0")
    text = svg.text()
    assert "channel 6" in text and "p19" in text


def test_attention_maps_use_a_sequential_scale(built: Build) -> None:
    """Probabilities are never negative: no colour for "below zero" (the maps' colour bar starts at 0)."""
    dom = parse_html(built.page("torch-layouts"))
    box = next(b for b in dom.find_all("div", cls="tv-checkpoint") if b.attrs["data-checkpoint"] == "softmax_0")
    ticks = [t for t in re.findall(r"[\u2212-]?\d+(?:\.\d+)?", box.find("svg").text())]
    assert ticks and not any(t.startswith(("\u2212", "-")) for t in ticks)


def test_a_raw_three_axis_checkpoint_warns_and_token_features_do_not(built: Build) -> None:
    """A scaled raw ``[2, 6, 8]`` input may be tokens or channels x length: a located warning
    naming the checkpoint and what to write, no strip; what a linear, a GELU and a norm make is
    drawn as tokens; the author's ``:layout:`` draws the raw input and silences the warning."""
    raw = [w for w in built.warnings if w.kind == "tensorviz.layout" and "mul_0" in w.message
           and Path(w.path or "").name == "torch-layouts.md"]
    assert len(raw) == 1, built.raw_warnings  # only the graph without :layout:
    assert ":layout: tokens" in raw[0].message and ":layout: channels-length" in raw[0].message
    boxes = parse_html(built.page("torch-layouts")).find_all("div", cls="tv-activations")
    drawn = {b.attrs["data-checkpoint"]: (b.attrs["data-layout"], b.find("p", cls="tv-checkpoint-label").text())
             for b in boxes[4].find_all("div", cls="tv-checkpoint")}
    assert set(drawn) == {"proj", "gelu_0", "norm"}, drawn  # no guessed strip for mul_0
    assert all(layout == "tokens" for layout, _ in drawn.values()), drawn
    problem = boxes[4].find("p", cls="tv-checkpoint-problem").text()
    assert "mul_0" in problem and ":layout: channels-length" in problem
    said = {b.attrs["data-checkpoint"]: (b.attrs["data-layout"], b.find("p", cls="tv-checkpoint-label").text())
            for b in boxes[5].find_all("div", cls="tv-checkpoint")}
    layout, label = said["mul_0"]
    assert layout == "channels-length" and "6 channels × length 8" in label and "token" not in label, label


def test_a_raw_jax_input_warns_and_a_dense_output_is_tokens(built: Build) -> None:
    """The same rule for JAX: ``x @ w`` (a ``dot_general``) and a tanh of it are token features,
    a scaled raw ``[2, 6, 8]`` input is a located warning that says what to write."""
    raw = [w for w in built.warnings if Path(w.path or "").name == "jax-results.md" and w.kind == "tensorviz.layout"]
    assert len(raw) == 1 and "mul_0" in raw[0].message and ":layout: tokens" in raw[0].message, built.raw_warnings
    box = parse_html(built.page("jax-results")).find_all("div", cls="tv-activations")[1]
    drawn = {b.attrs["data-checkpoint"]: b.attrs["data-layout"] for b in box.find_all("div", cls="tv-checkpoint")}
    assert drawn == {"tanh_0": "tokens"}, drawn
