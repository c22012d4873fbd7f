"""``:model: @name`` / ``@name:step``: figures that use a ``tv-train``'s model, built for real.

``roots/test-trained``: ``training.md`` trains a tiny attention model 20 steps (real PyTorch) whose
attention scale the loop sets to step / 10, so each snapshot has a known value; ``analysis.md`` (read
before ``training.md`` in name order, so the reading order is tested too) draws its graph with
``@fit`` (the check reads the scale of step 20 in the model the graph traced), its attention with
``@fit:10`` (the check reads the weight that scale 1 gives), and the untrained model for comparison.
The unit tests at the top need no Sphinx and no framework.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, edit, load_artifacts, run_sphinx, store_dir, warning_records
from offline_util import cache_only_build_without_weights
from sphinx_tensorviz.core.request import ExecutionRequest
from sphinx_tensorviz.execute.batch import wave
from sphinx_tensorviz.read.trained import TrainedModel, model_option


def _request(directive: str, options: dict[str, Any]) -> ExecutionRequest:
    return ExecutionRequest(directive=directive, docname="doc", lineno=1, lesson_id="doc", backend="torch",
                            entry="m.py", files={"m.py": "0"}, inline_code=None, function="f", inputs={},
                            seed=0, device="cpu", options=options)


def test_model_option_reads_a_file_reference_or_a_training() -> None:
    assert model_option("models/tiny.py:make_model") == ("models/tiny.py", "make_model")
    assert model_option("@Induction") == TrainedModel("induction", None)
    assert model_option(" @induction:300 ") == TrainedModel("induction", 300)
    for bad in ("@", "@induction:last", "@two words", "tiny.py"):
        with pytest.raises(ValueError):
            model_option(bad)


def test_a_job_waits_for_the_training_it_loads_whatever_its_kind() -> None:
    training = _request("tv-train", {})
    uses = _request("tv-anything", {"trained": {"name": "fit", "training": training.content_hash, "step": 3}})
    plain = _request("tv-anything", {"x": 1})
    to_run = {r.content_hash: r for r in (training, uses, plain)}
    assert [wave(r, to_run) for r in (training, uses, plain)] == [0, 1, 0]
    # its training already stored (not in this build's runs): nothing to wait for
    assert wave(uses, {uses.content_hash: uses}) == 0


@pytest.mark.execution
def test_the_worker_loads_flax_nnx_weights_as_the_training_kept_them(tmp_path: Path) -> None:
    """What a ``tv-train`` writes for a Flax NNX model (:func:`parameters_file`) loads back into a model
    built from another seed, through the job's factory (real NNX, a two-layer MLP)."""
    import jax.numpy as jnp
    from flax import nnx

    from sphinx_tensorviz.core.protocol import Job
    from sphinx_tensorviz.execute.worker.trained import model_factory
    from sphinx_tensorviz.features.train.weights import parameters_file

    class Mlp(nnx.Module):
        def __init__(self, seed: int) -> None:
            rngs = nnx.Rngs(seed)
            self.first, self.second = nnx.Linear(3, 4, rngs=rngs), nnx.Linear(4, 2, rngs=rngs)

        def __call__(self, x: Any) -> Any:
            return self.second(nnx.relu(self.first(x)))

    trained = Mlp(1)
    content, _ = parameters_file(trained, "jax")
    path = tmp_path / "weights.safetensors"
    path.write_bytes(content)
    weights = {"path": str(path), "sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}
    module = types.SimpleNamespace(make=Mlp)
    job = Job("tv-attention", "m:f", "jax", 0, "make", {}, {"trained": {"name": "mlp", "step": 1, "weights": weights}},
              "cpu", "m.py", str(tmp_path), {})
    loaded = model_factory(module, job)(seed=7)  # type: ignore[arg-type]
    x = jnp.ones((1, 3))
    assert jnp.allclose(loaded(x), trained(x)) and not jnp.allclose(Mlp(7)(x), trained(x))
    path.write_bytes(content[:-1] + b" ")  # the store's file is not the one recorded: refused
    with pytest.raises(ValueError, match="not the file the training recorded"):
        model_factory(module, job)(seed=7)  # type: ignore[arg-type]


# -- real builds ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    srcdir = copy_root("trained", tmp_path_factory.mktemp("trained") / "src")
    return srcdir, run_sphinx(srcdir)


def _by_kind(srcdir: Path) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for artifact in load_artifacts(srcdir).values():
        found.setdefault(artifact["data"]["kind"], []).append(artifact)
    return found


@pytest.mark.sphinx
@pytest.mark.execution
def test_later_figures_show_the_trained_weights_of_the_step_they_name(built: tuple[Path, Any]) -> None:
    srcdir, build = built
    assert build.summary == (4, 0, 0), build.status
    assert build.tensorviz_warnings() == [], build.warnings
    kinds = _by_kind(srcdir)
    (training,) = kinds["train"]
    (graph,) = kinds["graph"]
    attention = {a["checks"][0]["name"]: a for a in kinds["attention"]}
    assert [c["name"] for c in graph["checks"]] == ["scale_is_two"] and graph["checks"][0]["passed"]
    assert attention["attention_at_scale_one"]["checks"][0]["passed"]
    assert attention["attention_untrained"]["checks"][0]["passed"]  # the factory alone: no weights
    uses = {graph["request"]["options"]["trained"]["step"],
            attention["attention_at_scale_one"]["request"]["options"]["trained"]["step"]}
    assert uses == {20, 10}
    for artifact in (graph, attention["attention_at_scale_one"]):
        assert artifact["request"]["options"]["trained"]["training"] == training["contentHash"]
        assert "weights" not in artifact["request"]["options"]["trained"]  # a path of this machine: job only
    html = build.html("analysis")
    assert html.count('class="tv-figure') >= 3 and "tv-error" not in html
    # run.py cannot load a training's weights: only the untrained figure offers one
    assert html.count("Reproduce this figure") == 1


@pytest.mark.sphinx
@pytest.mark.execution
def test_editing_the_training_re_runs_it_and_exactly_its_dependents_and_prose_runs_nothing(
        built: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    edit(srcdir / "training.md", "learns to predict", "learns, slowly, to predict")
    assert run_sphinx(srcdir).summary == (0, 4, 0)
    before = _by_kind(srcdir)
    edit(srcdir / "models" / "training.py", "lr=0.5)", "lr=0.25)")
    again = run_sphinx(srcdir)
    assert again.summary == (3, 1, 0), again.status
    assert again.tensorviz_warnings() == [], again.warnings
    after = _by_kind(srcdir)
    new = {a["contentHash"] for k in after.values() for a in k} - {a["contentHash"] for k in before.values() for a in k}
    assert {k for k, artifacts in after.items() for a in artifacts if a["contentHash"] in new} == {"train", "graph",
                                                                                                    "attention"}
    assert len(new) == 3  # the training, the graph and the trained attention; the untrained one is cached
    (training,) = [a for a in after["train"] if a["contentHash"] in new]
    assert all(a["request"]["options"]["trained"]["training"] == training["contentHash"]
               for kind in ("graph", "attention") for a in after[kind] if a["contentHash"] in new)


@pytest.mark.sphinx
def test_an_unknown_training_or_step_is_a_located_warning_naming_the_valid_ones(
        built: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    edit(srcdir / "analysis.md", ":model: @fit\n", ":model: @missing\n")
    edit(srcdir / "analysis.md", ":model: @fit:10\n", ":model: @fit:7\n")
    again = run_sphinx(srcdir)
    warnings = again.tensorviz_warnings()
    assert len(warnings) == 2, again.warnings
    assert "analysis.md:5: WARNING: tv-graph: :model: no training named 'missing'; the trainings are: @fit" \
        in warnings[0] and "[tensorviz.option]" in warnings[0]
    assert "analysis.md:14: WARNING: tv-attention: :model: the training 'fit' has no snapshot at step 7; its " \
        "steps are 0, 10, 20" in warnings[1] and "[tensorviz.option]" in warnings[1]
    assert again.summary == (0, 2, 0)  # the training and the untrained figure; nothing runs


@pytest.mark.sphinx
def test_a_cache_only_build_without_weights_or_a_framework_draws_every_figure(
        built: tuple[Path, Any], tmp_path: Path) -> None:
    done, out = cache_only_build_without_weights(built[0], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tensorviz: 0 executed, 4 cached, 0 failed" in done.stdout
    html = (out / "analysis.html").read_text("utf-8")
    assert "Attention after ten steps" in html and "The trained model" in html and "tv-error" not in html


@pytest.mark.sphinx
@pytest.mark.execution
def test_verify_re_runs_the_dependents_with_the_stored_weights(built: tuple[Path, Any],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    assert main(["verify", str(built[0]), "--doc", "analysis"]) == 0
    assert "3 of 3 artifacts reproduced" in capsys.readouterr().out


@pytest.mark.sphinx
def test_status_shows_which_figures_use_a_training(built: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    srcdir = built[0]
    assert main(["status", str(srcdir)]) == 0
    out = capsys.readouterr().out
    assert "2 figures use fit (training.md:5)" in out
    assert main(["status", str(srcdir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (training,) = [a for a in load_artifacts(srcdir).values() if a["data"]["kind"] == "train"]
    assert report["uses"] == {"fit": {"figures": 2, "training": training["contentHash"]}}


@pytest.mark.sphinx
@pytest.mark.execution
def test_a_parallel_read_that_misses_a_training_warns_and_the_next_build_uses_it(tmp_path: Path) -> None:
    """Under ``-j`` the pages are read in chunks, the first two in processes started together (Sphinx makes
    chunks of 4 of these 9 pages in order, trainings first): ``page2b.md``, in the second, cannot see the
    training read in the first. It says so (never a wrong hash), and the next build reads it again and
    draws it."""
    srcdir = copy_root("trained", tmp_path / "src")
    pages = [f"page{n}" for n in range(6)]
    for page in pages:
        (srcdir / f"{page}.md").write_text(f"# {page}\n\nProse only.\n", "utf-8")
    shutil.move(srcdir / "analysis.md", srcdir / "page2b.md")
    edit(srcdir / "index.md", "analysis\n", "\n".join([*pages, "page2b"]) + "\n")
    first = _parallel_build(srcdir)
    missed = [w for w in first.stderr_records if "no training named 'fit'" in w]
    assert missed and all("page2b.md:" in w and "reads pages in parallel" in w and "build again" in w
                          for w in missed), first.stderr
    again = _parallel_build(srcdir)
    assert [w for w in again.stderr_records if "[tensorviz." in w] == [], again.stderr
    assert "tensorviz: 2 executed, 2 cached, 0 failed" in again.stdout, again.stdout


@dataclass
class _Run:
    stdout: str
    stderr: str

    @property
    def stderr_records(self) -> list[str]:
        return warning_records(self.stderr)


def _parallel_build(srcdir: Path) -> _Run:
    """``sphinx-build -j 2`` in a process of its own (forking this one, which has imported JAX, could hang)."""
    done = subprocess.run([sys.executable, "-m", "sphinx", "-j", "2", "-b", "html", str(srcdir), str(srcdir / "_build")],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stdout + done.stderr
    return _Run(done.stdout, done.stderr)


@pytest.mark.sphinx
def test_two_trainings_of_one_name_are_a_located_warning(built: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    text = (srcdir / "training.md").read_text("utf-8")
    second = text[text.index("```{tv-train}"):].replace(":seed: 3", ":seed: 4")
    edit(srcdir / "training.md", "A tiny attention model", second + "\nA tiny attention model")
    again = run_sphinx(srcdir, confoverrides={"tensorviz_execution_mode": "cache-only"})
    warnings = [w for w in again.tensorviz_warnings() if "named 'fit'" in w]
    assert len(warnings) == 1 and "training.md:" in warnings[0] and "[tensorviz.option]" in warnings[0], again.warnings
    assert "training.md:16: WARNING: tv-train: :name: another tv-train is named 'fit' (training, line 3)" in warnings[0]


@pytest.mark.execution
def test_the_worker_loads_equinox_weights_into_a_new_model(tmp_path: Path) -> None:
    """Equinox models are immutable: the factory returns a copy with the training's arrays (real Equinox)."""
    import equinox as eqx
    import jax

    from sphinx_tensorviz.core.protocol import Job
    from sphinx_tensorviz.execute.worker.trained import model_factory
    from sphinx_tensorviz.features.train.weights import parameters_file

    def make(seed: int) -> Any:
        return eqx.nn.MLP(3, 2, 4, 2, key=jax.random.PRNGKey(seed))

    trained = make(1)
    content, _ = parameters_file(trained, "jax")
    path = tmp_path / "weights.safetensors"
    path.write_bytes(content)
    weights = {"path": str(path), "sha256": hashlib.sha256(content).hexdigest(), "size": len(content)}
    job = Job("tv-graph", "m:f", "jax", 0, "make", {}, {"trained": {"name": "mlp", "step": 1, "weights": weights}},
              "cpu", "m.py", str(tmp_path), {})
    loaded = model_factory(types.SimpleNamespace(make=make), job)(seed=7)  # type: ignore[arg-type]
    x = jax.numpy.ones(3)
    assert jax.numpy.allclose(loaded(x), trained(x)) and not jax.numpy.allclose(make(7)(x), trained(x))


@pytest.mark.sphinx
@pytest.mark.execution
def test_a_sweep_over_snapshots_shows_the_model_at_each_step(built: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    (srcdir / "analysis.md").write_text((srcdir / "analysis.md").read_text("utf-8") + """
During training:

```{tv-attention}
:model: @fit
:inputs: [1, 2, 3, 4, 5, 6]
:sweep: snapshot=[0, 10, 20]
:title: Attention as it trains
```
""", "utf-8")
    again = run_sphinx(srcdir)
    assert again.summary == (3, 4, 0), again.status
    assert again.tensorviz_warnings() == [], again.warnings
    swept = {a["request"]["options"]["trained"]["step"]: a for a in load_artifacts(srcdir).values()
             if a["data"]["kind"] == "attention" and a["request"]["options"].get("trained", {}).get("name") == "fit"
             and "checks" not in a["request"]["options"]}
    assert sorted(swept) == [0, 10, 20]
    for step, artifact in swept.items():  # the scale the training set at that step: step / 10
        scale = step / 10
        assert artifact["data"]["maps"][0]["weights"][1][0] == pytest.approx(math.exp(scale) / (math.exp(scale) + 1),
                                                                             abs=1e-5)
    assert 'type="range"' in again.html("analysis")


@pytest.mark.sphinx
def test_a_sweep_over_a_step_that_is_not_a_snapshot_is_a_located_warning(built: tuple[Path, Any],
                                                                          tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    edit(srcdir / "analysis.md", ":model: @fit:10\n", ":model: @fit\n:sweep: snapshot=[0, 5, 20]\n")
    again = run_sphinx(srcdir, confoverrides={"tensorviz_execution_mode": "cache-only"})
    (warning,) = [w for w in again.tensorviz_warnings() if "snapshot 5" in w]
    assert "analysis.md:14: WARNING: tv-attention: :sweep: snapshot 5 is not a snapshot of the training " \
        "'fit'; its steps are 0, 10, 20" in warning and "[tensorviz.option]" in warning


@pytest.mark.sphinx
def test_a_figure_whose_weights_are_not_in_the_store_warns_and_runs_nothing(built: tuple[Path, Any],
                                                                             tmp_path: Path) -> None:
    """The training is cached but its snapshot files are gone (a fresh checkout that does not commit
    ``weights/``): a figure that must run again says which file it lacks, and nothing is stored for it."""
    srcdir = tmp_path / "src"
    shutil.copytree(built[0], srcdir)
    shutil.rmtree(store_dir(srcdir) / "weights")
    edit(srcdir / "analysis.md", ":inputs: [1, 2, 3, 4, 5, 6]\n:checks: attention_at_scale_one",
         ":inputs: [1, 2, 3, 4, 5]\n:checks: attention_at_scale_one")
    before = set(load_artifacts(srcdir))
    again = run_sphinx(srcdir)
    warnings = again.tensorviz_warnings()  # then the page's: no artifact to draw (tensorviz.cache_miss)
    assert len(warnings) == 2 and "[tensorviz.cache_miss]" in warnings[1], again.warnings
    # in 'auto' it would have run: the page says it was not computed, not to "build once with 'auto'"
    assert "it was not computed in this build" in warnings[1] and "build once with" not in warnings[1]
    warning = warnings[0]
    assert "analysis.md:14: WARNING: tv-attention: the training @fit kept " in warning
    assert ".safetensors, which is not in the store's weights/ folder" in warning and "[tensorviz.store]" in warning
    assert "tensorviz: 0 executed, 3 cached, 0 failed, 1 not computed" in again.status
    assert set(load_artifacts(srcdir)) == before
