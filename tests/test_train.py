"""``tv-train``: a recorded training run, built for real (tiny PyTorch, Flax NNX and Equinox loops).

The build tests share one build of ``roots/test-train`` (module scope) and copy it where they edit;
the limit tests build ``roots/test-train-bad`` (a run that diverges, one that logs a million steps).
The unit tests at the top need no Sphinx and no framework: the bounded curves, the protocol's
returned files, the store's weights folder and the words of the alt text.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import copy_root, edit, load_artifacts, run_sphinx, store_dir
from offline_util import cache_only_build_without_weights
from sphinx_tensorviz.core.protocol import ProtocolError, ReturnedFile, Success, parse_result
from sphinx_tensorviz.execute.returned import read_returned
from sphinx_tensorviz.features.train.curves import MAX_POINTS, Curve, downsample
from sphinx_tensorviz.features.train.describe import curve_sentence, train_alt
from sphinx_tensorviz.store.artifacts import ArtifactStore
from sphinx_tensorviz.store.guard import list_store, set_aside_intruders
from sphinx_tensorviz.store.returned_files import FOLDER, store_returned_file

ENVIRONMENT = {"backend": "cpu", "python": "3.12", "framework": "torch"}


# -- bounded curves ------------------------------------------------------------------------

def test_a_million_points_keep_the_first_the_last_and_the_minimum_within_the_bound() -> None:
    curve = Curve("loss")
    values = [1.0 / math.sqrt(step) + 0.01 * math.sin(step / 1000) for step in range(1, 1_000_001)]
    lowest = min(range(len(values)), key=values.__getitem__)
    for step, value in enumerate(values, start=1):
        curve.add(step, value)
    kept = curve.stored()
    assert len(kept) <= MAX_POINTS and len(curve.points) < 2 * MAX_POINTS
    assert kept[0] == (1, values[0]) and kept[-1] == (1_000_000, values[-1])
    assert (lowest + 1, values[lowest]) in kept
    assert [s for s, _ in kept] == sorted({s for s, _ in kept}) and curve.logged == 1_000_000
    gaps = sorted(b[0] - a[0] for a, b in zip(kept, kept[1:]))
    assert len(kept) >= MAX_POINTS - 3 and gaps[-3] <= 2 * gaps[len(gaps) // 2]  # spread over the whole run
    early = [v for s, v in kept if s <= 50_000]
    assert len(early) >= MAX_POINTS // 25 and early[1] < 0.5 * early[0]  # the steep start is drawn


def test_downsampling_spreads_the_points_evenly() -> None:
    points = [(step, float(step % 7)) for step in range(1000)]
    kept = downsample(points, 50)
    assert len(kept) <= 50 and kept[0] == points[0] and kept[-1] == points[-1]
    gaps = [b[0] - a[0] for a, b in zip(kept, kept[1:])]
    assert max(gaps) <= 2 * min(gaps) + 2  # even spacing, not a cluster at one end
    assert downsample(points[:10], 50) == points[:10]


def test_step_ticks_read_as_numbers() -> None:
    from sphinx_tensorviz.features.train.chart import nice_ticks, step_label

    assert [step_label(t) for t in nice_ticks(0, 1_000_000)] == ["0", "200k", "400k", "600k", "800k", "1M"]
    assert [step_label(t) for t in nice_ticks(0, 60)] == ["0", "20", "40", "60"]
    assert nice_ticks(0.31, 4.2, 4)[0] <= 0.31 and nice_ticks(0.31, 4.2, 4)[-1] >= 4.2


# -- the log a training function receives (in this process: the worker's own code) ---------------

@pytest.mark.execution
def test_the_log_refuses_what_it_cannot_record_by_name() -> None:
    import torch

    from sphinx_tensorviz.execute.worker.loader import BadResult
    from sphinx_tensorviz.features.train.recorder import MAX_METRICS, TrainingLog

    def log(snapshots: list[int] | None = None) -> TrainingLog:
        return TrainingLog(torch.nn.Linear(2, 1), "torch", 10, snapshots or [], 64)

    with pytest.raises(BadResult, match="loss= must be a number"):
        log().step(1, loss=torch.ones(2))
    going_back = log()
    going_back.step(5, loss=1.0)
    with pytest.raises(BadResult, match="never go back"):
        going_back.step(4, loss=1.0)
    with pytest.raises(BadResult, match="steps run from 0 to :steps: \\(10\\)"):
        log().step(11, loss=1.0)
    crowded = log()
    with pytest.raises(BadResult, match=f"more than {MAX_METRICS} metrics"):
        crowded.step(1, **{f"m{i}": 1.0 for i in range(MAX_METRICS + 1)})
    skipped = log([3, 10])
    skipped.step(2, loss=1.0)
    with pytest.raises(BadResult, match="never logged the snapshot step\\(s\\) 3"):
        skipped.finish()


@pytest.mark.execution
def test_a_run_that_diverges_at_once_says_so(tmp_path: Path) -> None:
    import types

    import torch

    from sphinx_tensorviz.core.protocol import Job
    from sphinx_tensorviz.execute.worker.loader import BadResult
    from sphinx_tensorviz.features.train.run import run_train

    module = types.ModuleType("lesson")
    module.make_model = lambda: torch.nn.Linear(2, 1)  # type: ignore[attr-defined]
    module.train = lambda model, *, steps, seed, log: log.step(1, loss=float("nan"))  # type: ignore[attr-defined]
    job = Job("tv-train", "sphinx_tensorviz.features.train.run:run_train", "torch", 0, "make_model", {},
              {"train_file": "m.py", "train": "train", "steps": 5, "snapshots": [0]}, "cpu", "m.py", str(tmp_path),
              {})
    with pytest.raises(BadResult, match="diverged before anything was recorded: loss became nan at step 1"):
        run_train(module, job)


@pytest.mark.sphinx
@pytest.mark.execution
def test_a_loop_that_returns_something_else_keeps_the_model_it_trained(tmp_path: Path) -> None:
    """A PyTorch loop that returns its losses: the last snapshot is the trained model, not a failure."""
    srcdir = copy_root("train", tmp_path / "src")
    (srcdir / "jax.md").write_text("# Nothing here\n", "utf-8")
    edit(srcdir / "models" / "linreg.py", "        log.step(step, loss=loss.item(), weight_norm=model.weight.norm().item())",
         "        log.step(step, loss=loss.item(), weight_norm=model.weight.norm().item()) if step < steps else None\n"
         "    return [loss.item()]")
    built = run_sphinx(srcdir)
    assert built.summary == (1, 0, 0) and built.tensorviz_warnings() == [], built.warnings
    (run,) = load_artifacts(srcdir).values()
    assert [s["step"] for s in run["data"]["snapshots"]] == [0, 30, 60]
    assert len({s["sha256"] for s in run["data"]["snapshots"]}) == 3  # the last one is trained further


# -- words -----------------------------------------------------------------------------------

def test_the_alt_text_states_the_curve_in_words() -> None:
    """Falls from its start to its end, steepest where the drop is (between steps 300 and 600 here)."""
    points = [[s, 4.2 if s < 300 else (0.31 if s > 600 else 4.2 - (4.2 - 0.31) * (s - 300) / 300)]
              for s in range(0, 1501, 50)]
    sentence = curve_sentence({"metric": "loss", "points": points, "logged": 31})
    assert sentence.startswith("loss falls from 4.2 to 0.31, most steeply between steps ")
    first, last = (int(n) for n in sentence.split("between steps ")[1].split(" and "))
    assert 300 <= first and last <= 600
    rising = curve_sentence({"metric": "accuracy", "points": [[0, 0.1], [50, 0.5], [100, 0.9]], "logged": 3})
    assert rising.startswith("accuracy rises from 0.1 to 0.9")
    data = {"steps": 1500, "curves": [{"metric": "loss", "points": points, "logged": 31}], "snapshots": [],
            "diverged": {"step": 1501, "metric": "loss", "value": "nan"}}
    assert "diverged at step 1501 (loss became nan)" in train_alt(data)


# -- returned files: the protocol, the read back, the store -----------------------------------

def _weights(content: bytes = b"weights") -> tuple[str, dict[str, Any]]:
    sha = hashlib.sha256(content).hexdigest()
    return f"{sha}.safetensors", {"kind": "train", "snapshots": [{"step": 0, "sha256": sha, "size": len(content)}]}


def test_a_result_returns_only_files_named_by_sha256_and_described_in_its_data() -> None:
    name, data = _weights()
    success = Success(data, ENVIRONMENT, files=(ReturnedFile(name, 7),))
    assert parse_result(json.loads(json.dumps(success.to_json()))) == success
    document = success.to_json()
    for files, why in (([{"name": "../x.safetensors", "size": 7}], "named"),
                       ([{"name": name, "size": 8}], "not described"),
                       ([{"name": "a" * 64 + ".safetensors", "size": 7}], "not described"),
                       ([{"name": name, "size": 7, "path": "/etc"}], "name, size"),
                       ([{"name": name, "size": 7}] * 2, "twice"),
                       ([{"name": name, "size": 7}] * 65, "at most")):
        with pytest.raises(ProtocolError, match=why):
            parse_result({**document, "files": files})
    huge = {**data, "snapshots": [{"sha256": "a" * 64, "size": 1 << 30}, {"sha256": "b" * 64, "size": 1}]}
    with pytest.raises(ProtocolError, match="more than 1,073,741,824 bytes"):
        parse_result({**document, "data": huge, "files": [{"name": "a" * 64 + ".safetensors", "size": 1 << 30},
                                                          {"name": "b" * 64 + ".safetensors", "size": 1}]})


def test_the_worker_writes_only_files_named_by_the_sha256_of_their_bytes(tmp_path: Path) -> None:
    from sphinx_tensorviz.execute.worker.loader import BadResult
    from sphinx_tensorviz.execute.worker.returned_files import write_returned_files

    name, _ = _weights()
    assert write_returned_files({name: b"weights"}, tmp_path / "files") == (ReturnedFile(name, 7),)
    assert (tmp_path / "files" / name).read_bytes() == b"weights"
    for returned, why in (({name: b"other"}, "not named by the sha256"), ({"../" + name: b"weights"}, "named"),
                          ({name: "weights"}, "be bytes")):
        with pytest.raises(BadResult, match=why):
            write_returned_files(returned, tmp_path / "again")
    with pytest.raises(BadResult, match="nowhere to write"):
        write_returned_files({name: b"weights"}, None)
    assert not (tmp_path / "again").exists() or not any((tmp_path / "again").iterdir())


def test_the_build_reads_back_only_the_regular_files_the_result_lists(tmp_path: Path) -> None:
    name, data = _weights()
    success = Success(data, ENVIRONMENT, files=(ReturnedFile(name, 7),))
    (tmp_path / "files").mkdir()
    assert not read_returned(tmp_path, success)[0].ok  # missing
    (tmp_path / "files" / name).write_bytes(b"WEIGHTS")  # same size, other bytes
    assert "changed" in read_returned(tmp_path, success)[0].message
    (tmp_path / "files" / name).unlink()
    (tmp_path / "elsewhere").write_bytes(b"weights")
    (tmp_path / "files" / name).symlink_to(tmp_path / "elsewhere")  # a link is never followed
    assert not read_returned(tmp_path, success)[0].ok
    (tmp_path / "files" / name).unlink()
    (tmp_path / "files" / name).write_bytes(b"weights")
    result, files = read_returned(tmp_path, success)
    assert result is success and files == {name: b"weights"}


def test_the_store_writes_a_returned_file_once_and_replaces_a_damaged_one(tmp_path: Path) -> None:
    name, _ = _weights()
    path = store_returned_file(ArtifactStore(tmp_path), name, b"weights")
    assert path == tmp_path / FOLDER / name and path.read_bytes() == b"weights"
    written = path.stat().st_mtime_ns
    assert store_returned_file(ArtifactStore(tmp_path), name, b"weights").stat().st_mtime_ns == written  # not again
    path.write_bytes(b"damaged")
    assert store_returned_file(ArtifactStore(tmp_path), name, b"weights").read_bytes() == b"weights"
    assert sorted(p.name for p in (tmp_path / FOLDER).iterdir()) == [name]  # no temporary file left


def test_a_snapshot_file_that_is_not_the_recorded_one_is_refused(tmp_path: Path) -> None:
    from sphinx_tensorviz.features.train.snapshots import read_snapshot

    name, data = _weights()
    snapshot = data["snapshots"][0]
    with pytest.raises(OSError):
        read_snapshot(tmp_path, snapshot)  # missing
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / name).write_bytes(b"WEIGHTS")
    with pytest.raises(OSError, match="not the file the training run recorded"):
        read_snapshot(tmp_path, snapshot)
    (tmp_path / FOLDER / name).write_bytes(b"weights and more")
    with pytest.raises(OSError, match="over the limit"):
        read_snapshot(tmp_path, snapshot)
    (tmp_path / FOLDER / name).write_bytes(b"weights")
    assert read_snapshot(tmp_path, snapshot) == b"weights"


def test_weights_a_build_writes_are_its_own_and_a_planted_file_is_set_aside(tmp_path: Path) -> None:
    """The store's guard (a concurrent build's, while lesson code runs) knows the weights a build wrote
    from the ledger; a file that lesson code put into ``weights/`` is set aside as any intruder."""
    store = ArtifactStore(tmp_path)
    store_returned_file(store, _weights(b"first")[0], b"first")
    before = list_store(store)
    written = store_returned_file(store, _weights(b"second")[0], b"second")
    planted = tmp_path / FOLDER / _weights(b"planted")[0]
    planted.write_bytes(b"planted")
    with store.lock():
        intruders = set_aside_intruders(store, before)
    assert [i.name for i in intruders] == [f"{FOLDER}/{planted.name}"]
    assert written.exists() and not planted.exists()


# -- real builds ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """``roots/test-train`` built once for HTML: a PyTorch, a Flax NNX and an Equinox run."""
    srcdir = copy_root("train", tmp_path_factory.mktemp("train") / "src")
    return srcdir, run_sphinx(srcdir)


def _by_train_file(srcdir: Path) -> dict[str, dict[str, Any]]:
    return {a["request"]["options"]["train_file"]: a for a in load_artifacts(srcdir).values()}


@pytest.mark.sphinx
@pytest.mark.execution
def test_three_tiny_trainings_build_clean_and_draw_their_curves(trained: tuple[Path, Any]) -> None:
    srcdir, built = trained
    assert built.statuscode == 0 and built.warnings.strip() == "", built.warnings
    assert built.summary == (3, 0, 0)
    runs = _by_train_file(srcdir)
    assert set(runs) == {"models/linreg.py", "models/nnx_reg.py", "models/eqx_train.py"}
    torch_run = runs["models/linreg.py"]["data"]
    assert [c["metric"] for c in torch_run["curves"]] == ["loss", "weight_norm"]
    loss = torch_run["curves"][0]["points"]
    assert len(loss) == 60 and loss[0][0] == 1 and loss[-1][0] == 60 and loss[-1][1] < loss[0][1] / 100
    assert [s["step"] for s in torch_run["snapshots"]] == [0, 30, 60]
    assert [s["step"] for s in runs["models/eqx_train.py"]["data"]["snapshots"]] == [20, 40]
    assert runs["models/linreg.py"]["checks"][0]["passed"] is True
    html = built.html("torch")
    assert 'class="tv-svg-train"' in html and html.count('class="tv-curve"') == 2
    assert "loss falls from 7.76 to " in html and "most steeply between steps" in html  # the alt text
    assert "Data: loss" in html and ">step<" in html  # the table of points
    assert "passed: </strong>The loss falls below 0.1 by the last step." in html
    for snapshot in torch_run["snapshots"]:
        assert snapshot["sha256"] in html  # the snapshot list in the details


@pytest.mark.sphinx
@pytest.mark.execution
def test_the_weights_files_hold_the_listed_hashes_and_load_back_into_the_models(trained: tuple[Path, Any]) -> None:
    """torch ``load_state_dict`` and NNX ``nnx.update``: the last snapshot is the trained model
    (the same loss as training it again here), the first the untrained one."""
    import torch
    from safetensors.numpy import load_file as load_numpy
    from safetensors.torch import load_file

    srcdir, _ = trained
    runs = _by_train_file(srcdir)
    for run in runs.values():
        for snapshot in run["data"]["snapshots"]:
            content = (store_dir(srcdir) / "weights" / f"{snapshot['sha256']}.safetensors").read_bytes()
            assert hashlib.sha256(content).hexdigest() == snapshot["sha256"] and len(content) == snapshot["size"]

    sys.path.insert(0, str(srcdir / "models"))
    try:
        import linreg
        import nnx_reg
    finally:
        sys.path.remove(str(srcdir / "models"))

    def weights(run: dict[str, Any], step: int) -> Path:
        sha = next(s["sha256"] for s in run["data"]["snapshots"] if s["step"] == step)
        return store_dir(srcdir) / "weights" / f"{sha}.safetensors"

    class Quiet:
        def step(self, *args: Any, **kwargs: Any) -> None:
            pass

    trained_here = linreg.make_model(0)
    linreg.train(trained_here, steps=60, seed=0, log=Quiet())
    loaded = linreg.make_model(123)
    loaded.load_state_dict(load_file(weights(runs["models/linreg.py"], 60)))
    assert linreg.loss_of(loaded) == pytest.approx(linreg.loss_of(trained_here), rel=1e-4, abs=1e-7)
    untrained = linreg.make_model(123)
    untrained.load_state_dict(load_file(weights(runs["models/linreg.py"], 0)))
    assert linreg.loss_of(untrained) == pytest.approx(linreg.loss_of(linreg.make_model(0)), rel=1e-6)
    assert isinstance(untrained.weight, torch.nn.Parameter)

    from sphinx_tensorviz.features.train.snapshots import find_snapshot, read_snapshot

    with pytest.raises(LookupError, match="no snapshot at step 7; the run kept steps 0, 30, 60"):
        find_snapshot(runs["models/linreg.py"]["data"], 7)
    last = find_snapshot(runs["models/linreg.py"]["data"])
    assert last["step"] == 60 and read_snapshot(store_dir(srcdir), last) == weights(runs["models/linreg.py"],
                                                                                     60).read_bytes()

    import jax
    from flax import nnx

    from sphinx_tensorviz.features.train.weights import path_name

    nnx_trained = nnx_reg.make_model(0)
    nnx_reg.train(nnx_trained, steps=40, seed=0, log=Quiet())
    flat = load_numpy(weights(runs["models/nnx_reg.py"], 40))
    nnx_loaded = nnx_reg.make_model(5)
    state = nnx.state(nnx_loaded, nnx.Param)
    leaves, tree = jax.tree_util.tree_flatten_with_path(state)
    nnx.update(nnx_loaded, jax.tree_util.tree_unflatten(tree, [flat[path_name(p)] for p, _ in leaves]))
    assert nnx_reg.loss_of(nnx_loaded) == pytest.approx(nnx_reg.loss_of(nnx_trained), rel=1e-4, abs=1e-7)
    assert nnx_reg.loss_of(nnx_loaded) < nnx_reg.loss_of(nnx_reg.make_model(0)) / 10


@pytest.mark.sphinx
@pytest.mark.execution
def test_editing_the_train_function_re_trains_it_and_editing_prose_runs_nothing(
        trained: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(trained[0], srcdir)
    edit(srcdir / "torch.md", "learns three coefficients.", "learns its three coefficients.")
    assert run_sphinx(srcdir).summary == (0, 3, 0)
    before = set(load_artifacts(srcdir))
    edit(srcdir / "models" / "linreg.py", "lr=0.1)", "lr=0.05)")
    built = run_sphinx(srcdir)
    assert built.summary == (1, 2, 0), built.status
    assert len(set(load_artifacts(srcdir)) - before) == 1


@pytest.mark.sphinx
def test_latex_and_text_draw_the_run_from_the_store(trained: tuple[Path, Any], tmp_path: Path) -> None:
    srcdir = tmp_path / "src"
    shutil.copytree(trained[0], srcdir)
    latex = run_sphinx(srcdir, "latex", confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert latex.statuscode == 0 and latex.warnings.strip() == "", latex.warnings
    assert latex.summary == (0, 3, 0)
    tex = next(latex.outdir.glob("*.tex")).read_text("utf-8")
    assert "Fitting a linear regression with SGD" in tex
    pdfs = sorted(latex.outdir.rglob("*.pdf"))
    assert pdfs and all(p.read_bytes().startswith(b"%PDF") for p in pdfs)
    text = run_sphinx(srcdir, "text", confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert text.statuscode == 0 and text.warnings.strip() == "", text.warnings
    page = (text.outdir / "torch.txt").read_text("utf-8")
    assert "loss falls from 7.76 to" in page and "Snapshots (weights kept" in page


@pytest.mark.sphinx
def test_a_cache_only_build_without_the_weights_or_a_framework_draws_the_page(
        trained: tuple[Path, Any], tmp_path: Path) -> None:
    done, out = cache_only_build_without_weights(trained[0], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tensorviz: 0 executed, 3 cached, 0 failed" in done.stdout
    html = (out / "torch.html").read_text("utf-8")
    assert 'class="tv-svg-train"' in html and "loss falls from 7.76 to" in html
    assert not (store_dir(tmp_path / "src") / "weights").exists()


@pytest.mark.sphinx
@pytest.mark.execution
@pytest.mark.parametrize(("train_file", "emulated"), [("eqx_train.py", {}),
                                                      ("linreg.py", {"ATEN_CPU_CAPABILITY": "default"})])
def test_the_run_py_of_a_training_re_trains_and_compares_the_final_loss(
        trained: tuple[Path, Any], train_file: str, emulated: dict[str, str]) -> None:
    """As written, and for PyTorch on an emulated older CPU (no AVX kernels): the final loss differs
    in its last bits there, within the tolerance that grows with the steps."""
    srcdir, built = trained
    folder = next(p.parent for p in (built.outdir / "_tensorviz").glob("*/run.py")
                  if (p.parent / "models" / train_file).exists())
    done = subprocess.run([sys.executable, "run.py", "--check"], cwd=folder, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **emulated})
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["reproduced"]["finalLossWithinTolerance"] == [1]
    recorded = _by_train_file(srcdir)[f"models/{train_file}"]["data"]["curves"][0]["points"][-1][1]
    assert report["reproduced"]["finalLoss"][0] == pytest.approx(recorded, rel=1e-3, abs=1e-6)


# -- limits ------------------------------------------------------------------------------------

@pytest.mark.sphinx
@pytest.mark.execution
def test_a_diverging_run_and_a_million_logged_steps_are_bounded_and_warn_at_the_directive(tmp_path: Path) -> None:
    srcdir = copy_root("train-bad", tmp_path / "src")
    built = run_sphinx(srcdir)
    assert built.summary == (2, 0, 0)
    warnings = built.tensorviz_warnings()
    assert len(warnings) == 1, built.warnings
    assert "index.md:5: WARNING: tv-train: the run diverged: loss became " in warnings[0]
    assert "[tensorviz.bad_result]" in warnings[0]
    runs = {a["request"]["options"]["train"]: a for a in load_artifacts(srcdir).values()}
    diverged = runs["train_too_fast"]["data"]
    step = diverged["diverged"]["step"]
    assert diverged["curves"][0]["points"][-1][0] == step - 1  # recorded up to the step before
    assert [s["step"] for s in diverged["snapshots"]] == [0]  # none after it
    assert "The run diverged at step" in built.html("index")
    million = runs["log_a_million"]["data"]["curves"][0]
    assert million["logged"] == 1_000_000 and len(million["points"]) <= MAX_POINTS
    assert million["points"][-1][0] == 1_000_000
    for artifact in store_dir(srcdir).glob("*.json"):
        assert artifact.stat().st_size < 64 * 1024
    fresh = tmp_path / "fresh"  # a new checkout of the course with its store: drawn from it, warned again
    shutil.copytree(srcdir, fresh, ignore=shutil.ignore_patterns("_build"))
    again = run_sphinx(fresh)
    assert again.summary == (0, 2, 0) and again.tensorviz_warnings() == [w.replace(str(srcdir), str(fresh))
                                                                        for w in warnings]


@pytest.mark.sphinx
@pytest.mark.execution
def test_verify_re_trains_and_show_summarises(trained: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from sphinx_tensorviz.cli import main

    srcdir, _ = trained
    assert main(["verify", str(srcdir), "--doc", "torch"]) == 0
    out = capsys.readouterr().out
    assert "tv-train" in out and "1 float32 value in the final loss (after 60 steps) within rtol=0.00016" in out
    assert out.strip().endswith("1 of 1 artifact reproduced")
    content_hash = next(h for h, a in load_artifacts(srcdir).items()
                        if a["request"]["options"]["train_file"] == "models/linreg.py")
    assert main(["show", content_hash[:12], str(srcdir)]) == 0
    out = capsys.readouterr().out
    assert "training over 60 steps: loss falls from 7.76 to " in out and "snapshots at 0, 30, 60" in out


@pytest.mark.sphinx
@pytest.mark.execution
def test_weights_over_their_limit_are_a_located_limit_failure(tmp_path: Path) -> None:
    srcdir = copy_root("train", tmp_path / "src")
    (srcdir / "jax.md").write_text("# Nothing here\n", "utf-8")
    built = run_sphinx(srcdir, confoverrides={"tensorviz_max_weights_mb": 0.0002})  # 210 bytes: one snapshot
    assert built.summary == (1, 0, 1)
    (warning,) = built.tensorviz_warnings()
    assert "torch.md:5:" in warning and "[tensorviz.limit]" in warning
    assert "over tensorviz_max_weights_mb = 0.0002" in warning and "up to step 30" in warning
    assert load_artifacts(srcdir) == {} and not (store_dir(srcdir) / "weights").exists()


BAD_OPTIONS = """# Bad options

```{tv-train}
:model: models/linreg.py:make_model
:train: models/linreg.py:train
:steps: 10
:snapshots: 0, 20
```

```{tv-train}
:model: models/linreg.py:make_model
:train: models/linreg.py:train
:steps: 10
:source: models/linreg.py
```

```{tv-train}
:model: models/linreg.py:make_model
:train: models/missing.py:train
:steps: 10
```
"""


@pytest.mark.sphinx
def test_bad_options_are_located_warnings_and_run_nothing(tmp_path: Path) -> None:
    srcdir = copy_root("train", tmp_path / "src")
    (srcdir / "jax.md").write_text("# Nothing here\n", "utf-8")
    (srcdir / "torch.md").write_text(BAD_OPTIONS, "utf-8")
    built = run_sphinx(srcdir)
    assert "executing" not in built.status and load_artifacts(srcdir) == {}
    found = built.tensorviz_warnings()
    assert len(found) == 3, built.warnings
    assert "torch.md:3:" in found[0] and ":snapshots: 20 after the last step (10)" in found[0]
    assert "torch.md:10:" in found[1] and ":source: is not an option of tv-train" in found[1]
    assert "torch.md:17:" in found[2] and "'models/missing.py' does not exist" in found[2]
    assert all("[tensorviz.option]" in w or "[tensorviz.source]" in w for w in found)


@pytest.mark.sphinx
@pytest.mark.execution
def test_a_run_over_the_time_limit_is_stopped_with_a_located_warning(tmp_path: Path) -> None:
    srcdir = copy_root("train-bad", tmp_path / "src")
    (srcdir / "index.md").write_text("# Slow\n\n```{tv-train}\n:model: models/runs.py:make_model\n"
                                     ":train: models/runs.py:train_forever\n:steps: 100000\n```\n", "utf-8")
    built = run_sphinx(srcdir, confoverrides={"tensorviz_timeout": 4})
    assert built.summary == (1, 0, 1)
    (warning,) = built.tensorviz_warnings()
    assert "index.md:3:" in warning and "[tensorviz.timeout]" in warning and "tensorviz_timeout" in warning
    assert load_artifacts(srcdir) == {} and not (store_dir(srcdir) / "weights").exists()
