"""Kept figure parts are never stale: every hashed option of every executed kind, changed, shows anew.

A figure's kept parts (``render/part_cache.py``) are named by everything their HTML depends on.
(When whole figures were kept, a page pass's figure, a graph's checkpoints, was named without the
graph's artifact: changing a graph's ``:checkpoints: up`` to ``up, act`` kept showing one strip,
even in a fresh output folder, issue 24, point 14. Page passes' figures are no longer kept.)

The test root ``tests/roots/test-kept-keys`` holds one figure of each executed kind, and a tour
and checkpoints drawn from the graph. The hashed options are read from the reference page (each
marked "(hashed"), so an option added there is covered here or the test fails; every round
changes one option of each kind, builds with the figures kept from the rounds before, and
compares the pages with a build with ``tensorviz_part_cache = False``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from string import Template
from typing import Any

import pytest

from conftest import ROOTS, run_sphinx
from sphinx_tensorviz.features.attention.directive import AttentionDirective
from sphinx_tensorviz.features.graph.directive import GraphDirective
from sphinx_tensorviz.features.heatmap.directive import HeatmapDirective
from sphinx_tensorviz.features.lens.directive import LensDirective
from sphinx_tensorviz.features.patch.directive import PatchDirective
from sphinx_tensorviz.features.train.directive import TrainDirective
from sphinx_tensorviz.read.frameworks import FRAMEWORK_OPTIONS
from sphinx_tensorviz.render.registry import registry

pytestmark = pytest.mark.sphinx

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "directives.md"
DIRECTIVES = {"tv-heatmap": HeatmapDirective, "tv-graph": GraphDirective, "tv-attention": AttentionDirective,
              "tv-train": TrainDirective, "tv-lens": LensDirective, "tv-patch": PatchDirective}

#: the options each figure starts with (an option line replaces the one of its name)
BASE = {
    "tv-heatmap": {
        "source": "models/heat.py", "function": "scaled", "rows": "[a, b]", "columns": "c{j}", "unit": "count",
        "prediction": "Which product is the largest?",
        "choices": "[{text: The last, correct: true}, {text: The first}]",
    },
    "tv-graph": {
        "model": "models/tiny.py:Tiny", "inputs": "[{shape: [1, 2, 4], dtype: float32, fill: randn}]",
        "checkpoints": "up", "prediction": "Which values does the ReLU keep?",
        "choices": "[{text: The positive ones, correct: true}, {text: All of them}]",
    },
    "tv-attention": {
        "model": "models/attn.py:Attn", "inputs": "[1, 2, 3, 4]", "prediction": "Where does the last token look?",
        "choices": "[{text: Everywhere before it, correct: true}, {text: Only at itself}]",
    },
    "tv-train": {
        "model": "models/train.py:make_model", "train": "models/train.py:train", "steps": "4",
        "snapshots": "0, 4", "prediction": "Does the loss fall?",
        "choices": "[{text: Yes, correct: true}, {text: No}]",
    },
    "tv-lens": {
        "model": "models/lm.py:make_model", "inputs": "[1, 2, 3, 4, 1, 2]",
        "prediction": "Which layer predicts the repeat?", "choices": "[{text: The last, correct: true}, {text: None}]",
    },
    "tv-patch": {
        "model": "models/lm.py:make_model", "clean": "[1, 2, 3, 4, 1, 2]", "corrupted": "[1, 2, 5, 4, 1, 2]",
        "metric": "logit-diff 3 5", "prediction": "Which layer carries the changed token?",
        "choices": "[{text: The first, correct: true}, {text: None}]",
    },
}
#: the graph as one figure in two frameworks (an MLP in PyTorch and Flax NNX; ``None`` leaves an option out)
TWO_FRAMEWORKS_GRAPH = {"model": None, "frameworks": "torch, jax", "torch": "models/mlp_torch.py:make",
                        "jax": "models/mlp_nnx.py:make", "inputs": "[{shape: [3, 8], fill: randn}]",
                        "checkpoints": "fc1"}
#: another value for each hashed option (several lines where an option needs another)
VARIANTS: dict[str, dict[str, dict[str, str | None]]] = {
    "tv-heatmap": {
        "source": {"source": "models/heat2.py"},
        "function": {"function": "doubled"},
        "backend": {"backend": "torch"},
        "seed": {"seed": "5"},
        "inputs": {"inputs": "{scale: 3.0}"},
        "rows": {"rows": "[p, q]"},
        "columns": {"columns": "d{j}"},
        "unit": {"unit": "amount"},
        "diverging": {"diverging": ""},
        "checks": {"checks": "positive"},
        "choices-check": {"choices-check": "positive"},
        "sweep": {"sweep": "scale=[1, 2]"},
        "sweep-checks": {"sweep": "scale=[1, 2]", "sweep-checks": "grows"},
        # one figure in two frameworks (``None``: the option is left out, :frameworks: refuses it)
        "frameworks": {"source": None, "function": None, "frameworks": "torch, jax",
                       "torch": "models/heat_fw.py:scaled_torch", "jax": "models/heat_fw.py:scaled_jax"},
        "torch": {"source": None, "function": None, "frameworks": "torch, jax",  # the frameworks disagree
                  "torch": "models/heat_fw.py:doubled_torch", "jax": "models/heat_fw.py:scaled_jax"},
        "jax": {"source": None, "function": None, "frameworks": "torch, jax",
                "torch": "models/heat_fw.py:scaled_torch", "jax": "models/heat_fw.py:scaled_jax_by_rows"},
    },
    "tv-graph": {
        "model": {"model": "models/tiny.py:Wider"},
        "backend": {"backend": "jax"},  # a torch model under JAX: the figure and its tour say it failed
        "seed": {"seed": "5"},
        "inputs": {"inputs": "[{shape: [1, 3, 4], dtype: float32, fill: randn}]"},
        "model-args": {"model-args": "{bias: false}"},
        "call-args": {"call-args": "{scale: 2.0}"},
        "checkpoints": {"checkpoints": "up, act"},
        "layout": {"layout": "tokens"},
        "token": {"token": "0"},
        "checks": {"checks": "check_nonnegative"},
        "checks-source": {"checks-source": "models/checks.py", "checks": "check_nonnegative"},
        "collapse": {"collapse": "squash"},
        "hide": {"hide": "squash"},
        "choices-check": {"choices-check": "check_nonnegative"},
        "sweep": {"sweep": "bias=[true, false]"},
        # the shared weights of a graph in two frameworks: a file (written by the test), a name map (the MLP
        # has no ``up``: the tour's step warns that its target is gone, and the build goes on)
        "weights": {**TWO_FRAMEWORKS_GRAPH, "weights": "models/mlp.safetensors"},
        "weight-map": {**TWO_FRAMEWORKS_GRAPH, "weight-map": "{proj.weight: proj.kernel}"},
    },
    "tv-attention": {
        "model": {"model": "models/attn.py:Attn2"},
        "backend": {"backend": "jax"},  # a torch model under JAX: the figure says it failed
        "seed": {"seed": "5"},
        "inputs": {"inputs": "[1, 2, 3, 1]"},
        "model-args": {"model-args": "{heads: 1}"},
        "call-args": {"call-args": "{scale: 2.0}"},
        "tokens": {"tokens": "[a, b, c, d]"},
        "layers": {"layers": "0", "model-args": "{heads: 2}"},
        "heads": {"heads": "1"},
        "checks": {"checks": "rows_sum_to_one"},
        "choices-check": {"checks": "rows_sum_to_one", "choices-check": "rows_sum_to_one"},
        "sweep": {"sweep": "heads=[1, 2]"},
    },
    "tv-train": {
        "model": {"model": "models/train.py:make_wider"},
        "train": {"train": "models/train.py:train_faster"},
        "steps": {"steps": "6", "snapshots": "0, 6"},
        "snapshots": {"snapshots": "0, 2"},
        "model-args": {"model-args": "{width: 3}"},
        "backend": {"backend": "jax"},  # a torch training under JAX: the figure says it failed
        "seed": {"seed": "5"},
        "checks": {"checks": "loss_falls"},
        "choices-check": {"checks": "loss_falls", "choices-check": "loss_falls"},
    },
    "tv-lens": {
        "model": {"model": "models/lm.py:make_mlp"},
        "backend": {"backend": "jax"},  # a torch model under JAX names no pieces: the figure says it failed
        "seed": {"seed": "5"},
        "inputs": {"inputs": "[1, 2, 3, 4, 1, 3]"},
        "model-args": {"model-args": "{layers: 3}"},
        "call-args": {"call-args": "{scale: 2.0}"},
        "tokens": {"tokens": "[a, b, c, d, e, f]"},
        "target": {"target": "7"},
        "top-k": {"top-k": "3"},
        "vocabulary": {"vocabulary": "models/lm.py:letters"},
        "residual": {"residual": "blocks.{i}"},
        "final-norm": {"final-norm": "none"},  # the model has one: its read-out misses the last logits
        "unembed": {"unembed": "models/lm.py:unembed"},
        "checks": {"checks": "finite"},
        "choices-check": {"checks": "finite", "choices-check": "finite"},
    },
    "tv-patch": {
        "model": {"model": "models/lm.py:make_mlp"},
        "backend": {"backend": "jax"},  # a torch model under JAX: the figure says it failed
        "seed": {"seed": "5"},
        "model-args": {"model-args": "{layers: 3}"},
        "call-args": {"call-args": "{scale: 2.0}"},
        "clean": {"clean": "[1, 2, 3, 4, 1, 3]"},
        "corrupted": {"corrupted": "[1, 9, 5, 4, 1, 2]"},
        "metric": {"metric": "logit-diff 3 7"},
        "patch": {"patch": "heads"},
        "tokens": {"tokens": "[a, b, c, d, e, f]"},
        "residual": {"residual": "blocks.{i}"},
        "attention": {"attention": "blocks.{i}.attn", "patch": "attn-out"},
        "mlp": {"mlp": "blocks.{i}.mlp", "patch": "mlp-out", "model": "models/lm.py:make_mlp"},
        "head-input": {"head-input": "blocks.{i}.attn.out", "patch": "heads"},
        "checks": {"checks": "finite"},
        "choices-check": {"checks": "finite", "choices-check": "finite"},
    },
}
#: hashed options a kind takes through another option
THROUGH = {"tv-graph": {"source": "model", "function": "model"},
           "tv-attention": {"source": "model", "function": "model"},
           "tv-train": {"source": "model", "function": "model", "inputs": "train"},  # the loop makes its data
           "tv-lens": {"source": "model", "function": "model"},
           "tv-patch": {"source": "model", "function": "model", "inputs": "clean"}}  # and :corrupted:

#: ``:frameworks:`` and the options it brings (``read/frameworks.py``) make no hash of their own: the
#: reference page marks them hashed "per framework" (``:weight-map:`` "for the JAX job only"), because
#: the figure becomes one request per framework, each exactly the single-framework request its code
#: would make (``:torch:`` read as the code's option, ``:backend:`` the framework), which the variants
#: of ``backend`` and of the code's option change; ``:weights:`` is the shared-weights job's file, and
#: the comparison is hashed on the frameworks' hashes. So each is changed for real on one kind, the
#: same code for all: ``:frameworks:``, ``:torch:`` and ``:jax:`` on the heatmap, ``:weights:`` and
#: ``:weight-map:`` (model kinds only: a heatmap refuses them) on the graph. A kind that runs no framework's code
#: (``framework_code`` is ``None``: tv-train) refuses them all, so they are not among its hashed options.
PER_FRAMEWORK = {name for name in FRAMEWORK_OPTIONS if name != "show"}


def hashed_options(directive: str) -> set[str]:
    """The options the reference page marks hashed for ``directive``, with those of every
    executing directive."""
    sections = re.split(r"^## ", REFERENCE.read_text("utf-8"), flags=re.M)
    wanted = [s for s in sections if s.startswith("Options of the executing directives") or s.startswith(f"`{directive}`")]
    assert len(wanted) == 2, f"the reference page has no section for {directive}"
    lines = [line for section in wanted for line in re.findall(r"^((?:`:[\w-]+:`(?:, | and )?)+) \(hashed", section, flags=re.M)]
    return {name for line in lines for name in re.findall(r"`:([\w-]+):`", line)}  # "`:torch:`, `:jax:` (hashed)"


def page_text(options: dict[str, dict[str, str]]) -> str:
    lines = {directive: "\n".join(f":{name}: {value}".rstrip() for name, value in values.items() if value is not None)
             for directive, values in options.items()}
    template = Template((ROOTS / "test-kept-keys" / "index.md.in").read_text("utf-8"))
    return template.substitute(heatmap=lines["tv-heatmap"], graph=lines["tv-graph"], attention=lines["tv-attention"],
                               train=lines["tv-train"], lens=lines["tv-lens"], patch=lines["tv-patch"])


def output(outdir: Path) -> dict[str, bytes]:
    return {p.relative_to(outdir).as_posix(): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and p.name != ".buildinfo"}


def built_pages(src: Path, options: dict[str, dict[str, str]], **overrides: Any) -> tuple[dict[str, bytes], Any]:
    """The output of a build of ``src`` with ``options``, in a fresh output folder."""
    (src / "index.md").write_text(page_text(options), "utf-8")
    shutil.rmtree(src / "_build", ignore_errors=True)
    built = run_sphinx(src, confoverrides=overrides)
    assert built.statuscode == 0, built.warnings
    return output(built.outdir), built


def test_every_hashed_option_of_every_kind_is_covered() -> None:
    """What the next test changes is what the reference page and the directives say is hashed."""
    two_frameworks = re.search(r"^### One figure in two frameworks\n\n(.+?)\n\n", REFERENCE.read_text("utf-8"),
                               flags=re.M | re.S)
    assert two_frameworks, "the reference page has no section on :frameworks:"
    assert PER_FRAMEWORK <= {name for variants in VARIANTS.values() for name in variants}  # each changed once
    for directive, cls in DIRECTIVES.items():
        hashed = hashed_options(directive)
        assert set(cls.result_options) <= hashed, directive
        assert hashed <= set(cls.option_spec), f"{directive}: the reference page names options it lacks"
        assert PER_FRAMEWORK <= hashed, directive
        if cls.kind.framework_code is None:  # the page does not offer it two frameworks
            assert f"`{directive}`" not in two_frameworks.group(1), directive
            hashed -= PER_FRAMEWORK
        else:
            assert f"`{directive}`" in two_frameworks.group(1), directive
            assert "backend" in VARIANTS[directive], directive  # what each framework's request changes
            hashed -= PER_FRAMEWORK - set(VARIANTS[directive])  # those a variant changes for real
        assert set(VARIANTS[directive]) | set(THROUGH.get(directive, {})) == hashed, directive
        assert set(THROUGH.get(directive, {}).values()) <= set(VARIANTS[directive])


def test_a_changed_hashed_option_is_never_shown_from_kept_parts(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-kept-keys", src, ignore=shutil.ignore_patterns("_build", "__pycache__"))
    _write_weights(src / "models" / "mlp.safetensors")
    base_pages, built = built_pages(src, BASE)
    assert set(registry(built.app).executed) == set(DIRECTIVES)  # every executed kind is here
    assert base_pages["index.html"].count(b'data-checkpoint="') == 1
    rounds = [dict(zip(VARIANTS, changed)) for changed in
              _longest_zip(*(list(VARIANTS[directive].items()) for directive in VARIANTS))]
    for changed in rounds:
        options = {directive: {**BASE[directive], **(changed[directive][1] if changed.get(directive) else {})}
                   for directive in BASE}
        what = {directive: change[0] for directive, change in changed.items() if change}
        kept, _ = built_pages(src, options)  # parts kept by every build before
        without, _ = built_pages(src, options, tensorviz_part_cache=False)
        assert kept.keys() == without.keys(), what
        assert kept["index.html"] != base_pages["index.html"], what
        stale = [name for name in kept if kept[name] != without[name]]
        assert not stale, f"after changing {what}, kept parts are stale in {stale}"
        if what.get("tv-graph") == "checkpoints":  # the case: both strips, not one
            assert kept["index.html"].count(b'data-checkpoint="') == 2


def _longest_zip(*lists: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of the lists side by side, ``None`` where a shorter list has ended."""
    length = max(len(items) for items in lists)
    return [tuple(items[i] if i < len(items) else None for items in lists) for i in range(length)]


def _write_weights(path: Path) -> None:
    """The ``:weights:`` variant's file: the PyTorch MLP's weights from another seed than the figure's."""
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(7)
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("kept_keys_mlp", path.parent / "mlp_torch.py")
    assert spec and spec.loader
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    save_file({name: tensor.contiguous() for name, tensor in module.make().state_dict().items()}, str(path))
