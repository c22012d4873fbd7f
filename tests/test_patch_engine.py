"""``tv-patch``'s batched activation patching (features/patch/patch_torch.py) against hand
computations on models small enough to do them in the test.

No build: the engine is called with real PyTorch models (the test root's tiny attention model and
tiny unmodified transformers models), and each batched result is checked against what one
un-batched, hand-patched forward pass gives.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from sphinx_tensorviz.execute.worker.causal_lm import find_parts, first_tensor, with_first  # noqa: E402
from sphinx_tensorviz.execute.worker.loader import BadResult  # noqa: E402
from sphinx_tensorviz.features.patch.data import normalised  # noqa: E402
from sphinx_tensorviz.features.patch.metric import logit_diff  # noqa: E402
from sphinx_tensorviz.features.patch.patch_torch import ROWS, patch_model  # noqa: E402

pytestmark = pytest.mark.execution

MODELS = Path(__file__).resolve().parent / "roots" / "test-patch" / "models"
CLEAN, CORRUPTED = [1, 4, 2, 6, 1, 4], [1, 9, 2, 6, 1, 4]  # differ at position 1 only, same last token


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"patch_models_{name}", MODELS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def metric(logits: Any) -> Any:
    return logit_diff(logits, 3, 7)


def patched(model: Any, patch: str, clean: list[int] = CLEAN, corrupted: list[int] = CORRUPTED) -> dict[str, Any]:
    found = patch_model(model, find_parts(model), patch, clean, corrupted, metric, {})
    found["effects"] = normalised(found["patched"], found["clean"], found["corrupted"])
    return found


def by_hand(model: Any, module: Any, on_input: bool, change: Any) -> float:
    """The metric of the corrupted input run alone, with ``change(clean activation, corrupted
    activation)`` replacing ``module``'s activation: the patch written out for one place."""
    kept: list[Any] = []
    grab = (module.register_forward_pre_hook(lambda m, args: kept.append(args[0].clone())) if on_input
            else module.register_forward_hook(lambda m, args, out: kept.append(first_tensor(out).clone())))
    with torch.no_grad():
        model(torch.tensor([CLEAN]))
    grab.remove()
    clean = kept[0]
    if on_input:
        hook = module.register_forward_pre_hook(lambda m, args: (change(clean, args[0].clone()), *args[1:]))
    else:
        hook = module.register_forward_hook(
            lambda m, args, out: with_first(out, change(clean, first_tensor(out).clone())))
    with torch.no_grad():
        logits = model(torch.tensor([CORRUPTED]))
    hook.remove()
    return float(metric(logits[0]))


def test_the_baselines_are_the_metric_of_each_input() -> None:
    model = load("tiny").make_model(layers=2, heads=2)
    found = patched(model, "residual")
    with torch.no_grad():
        for ids, value in ((CLEAN, found["clean"]), (CORRUPTED, found["corrupted"])):
            logits = model(torch.tensor([ids]))[0]
            assert value == pytest.approx(float(logits[-1, 3] - logits[-1, 7]), abs=1e-6)
    assert found["dtype"] == "float32"


def test_patching_the_only_head_restores_all_of_it() -> None:
    """One layer, one head, the inputs differ before the last position: the last position's residual
    is its (shared) embedding plus the head's output, so the clean head gives the clean logits."""
    found = patched(load("tiny").make_model(layers=1, heads=1), "heads")
    assert abs(found["clean"] - found["corrupted"]) > 0.01  # a difference to restore
    assert found["effects"] == [[pytest.approx(1.0, abs=1e-5)]]


def test_the_last_residual_at_the_last_position_restores_all_of_it() -> None:
    """The residual stream after the last layer at the last position is all the logits there depend
    on; at positions where the inputs are the same (before the change) a patch changes nothing."""
    for model in (load("tiny").make_model(layers=2, heads=2, mlp=True), load("hf").llama()):
        effects = patched(model.eval(), "residual")["effects"]
        assert effects[-1][-1] == pytest.approx(1.0, abs=1e-4)
        assert effects[0][0] == pytest.approx(0.0, abs=1e-4)  # position 0: the same token in both


@pytest.mark.parametrize("patch", ["residual", "attn-out", "mlp-out", "heads"])
def test_a_batched_cell_is_the_unbatched_patched_run(patch: str) -> None:
    """A middle cell of the batched grid equals one forward pass of the corrupted input with that one
    activation replaced by hand."""
    model = load("tiny").make_model(layers=2, heads=2, mlp=True)
    parts = find_parts(model)
    found = patched(model, patch)
    layer = parts.layers[0]
    if patch == "heads":
        head = 1
        width = 16 // 2
        part = slice(head * width, (head + 1) * width)

        def change(clean: Any, x: Any) -> Any:
            x[:, :, part] = clean[:, :, part]
            return x

        value, cell = by_hand(model, layer.head_input, True, change), found["patched"][0][head]
    else:
        position = 1

        def change(clean: Any, x: Any) -> Any:
            x[:, position] = clean[:, position]
            return x

        module = {"residual": layer.block, "attn-out": layer.attention, "mlp-out": layer.mlp}[patch]
        value, cell = by_hand(model, module, False, change), found["patched"][0][position]
    assert cell == pytest.approx(value, abs=1e-5)
    gap = found["clean"] - found["corrupted"]
    assert found["effects"][0][1] == pytest.approx((cell - found["corrupted"]) / gap, abs=1e-6)
    assert 1e-3 < abs(found["effects"][0][1]) < 0.98  # a middle value, not one of the two ends


def test_more_places_than_one_forward_pass_holds() -> None:
    """Over :data:`ROWS` places the patching runs in several passes; the cells stay in their places."""
    model = load("tiny").make_model(layers=ROWS // 4 + 1, heads=1)
    ids = [1, 4, 2, 6]
    found = patch_model(model, find_parts(model), "residual", ids, [1, 9, 2, 6], metric, {})
    assert len(found["patched"]) * len(ids) > ROWS
    # position 0 holds the same token in both inputs: patching it changes nothing, in every pass; the
    # last layer's residual at the last position (in the last pass) is all the last logits depend on
    assert all(row[0] == pytest.approx(found["corrupted"], abs=1e-4) for row in found["patched"])
    assert found["patched"][-1][-1] == pytest.approx(found["clean"], abs=1e-4)


def test_a_large_vocabulary_over_a_long_input_gets_fewer_rows_per_pass() -> None:
    """Rows x positions x vocabulary logits stay within the budget (a real vocabulary, 256 tokens)."""
    from sphinx_tensorviz.features.patch.patch_torch import LOGITS_BUDGET, rows_per_pass

    assert rows_per_pass((1, 6, 12)) == ROWS
    assert rows_per_pass((1, 256, 32_000)) == 4 and 4 * 256 * 32_000 <= LOGITS_BUDGET
    assert rows_per_pass((1, 4096, 128_000)) == 1  # never none


def test_equal_baselines_leave_nothing_to_normalise() -> None:
    with pytest.raises(BadResult, match=r"\(nearly\) the same metric \(1\.5 and 1\.5\)"):
        normalised([[1.5]], 1.5, 1.5)


@pytest.mark.parametrize(("answer", "words"), [(lambda logits: "big", "returned str, not one number"),
                                               (lambda logits: logits[-1, 0] / 0 * 0, "returned nan")])
def test_a_metric_that_gives_no_finite_number_is_refused(answer: Any, words: str) -> None:
    from sphinx_tensorviz.features.patch.patch_torch import PatchError

    model = load("tiny").make_model()
    with pytest.raises(PatchError, match=words):
        patch_model(model, find_parts(model), "heads", CLEAN, CORRUPTED, answer, {})


# -- JAX: a Flax NNX model that names its pieces, patched eagerly ------------------------------------

NNX_NAMES = {"residual": "blocks.{i}", "attention": "blocks.{i}.attn", "mlp": "blocks.{i}.mlp",
             "head_input": "blocks.{i}.attn.out"}


@pytest.mark.parametrize("patch", ["residual", "mlp-out", "heads"])
def test_a_jax_cell_is_the_unbatched_patched_run(patch: str) -> None:
    """A cell of the batched JAX grid equals one eager forward pass of the corrupted input with that
    one activation swapped in by hand; the swapped modules are put back afterwards."""
    pytest.importorskip("flax")
    import jax.numpy as jnp

    from sphinx_tensorviz.features.patch.patch_jax import patch_jax_model

    model = load("nnx_lm").TinyLM()
    block = model.blocks[0]
    found = patch_jax_model(model, NNX_NAMES, patch, CLEAN, CORRUPTED, metric)
    assert model.blocks[0] is block and type(block.attn.out).__name__ == "LinearGeneral"  # put back
    parent, name = {"residual": (model.blocks, 0), "mlp-out": (block, "mlp"), "heads": (block.attn, "out")}[patch]
    original = parent[name] if isinstance(name, int) else getattr(parent, name)
    kept: list[Any] = []

    def put(value: Any) -> None:
        if isinstance(name, int):
            parent[name] = value
        else:
            setattr(parent, name, value)

    def recorder(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        kept.append(args[0] if patch == "heads" else out)
        return out

    put(recorder)
    model(jnp.asarray([CLEAN]))
    clean = kept[0]

    def patched(*args: Any, **kwargs: Any) -> Any:
        if patch == "heads":  # head 1: its index on the heads axis, at every position
            return original(args[0].at[:, :, 1].set(clean[:, :, 1]), *args[1:], **kwargs)
        return original(*args, **kwargs).at[:, 1].set(clean[:, 1])  # position 1

    put(patched)
    value = float(metric(model(jnp.asarray([CORRUPTED]))[0]))
    put(original)
    assert found["patched"][0][1] == pytest.approx(value, abs=1e-5)
    assert found["dtype"] == "float32"


def test_a_jax_model_must_name_its_pieces() -> None:
    pytest.importorskip("flax")
    from sphinx_tensorviz.features.patch.patch_jax import patch_jax_model
    from sphinx_tensorviz.features.patch.patch_torch import PatchError

    model = load("nnx_lm").TinyLM()
    with pytest.raises(PatchError, match=r"give :head-input:"):
        patch_jax_model(model, {"residual": "blocks.{i}"}, "heads", CLEAN, CORRUPTED, metric)
    with pytest.raises(PatchError, match=r"give :residual:"):
        patch_jax_model(model, {}, "residual", CLEAN, CORRUPTED, metric)


def test_the_last_jax_residual_restores_all_of_it() -> None:
    pytest.importorskip("flax")
    from sphinx_tensorviz.features.patch.patch_jax import patch_jax_model

    found = patch_jax_model(load("nnx_lm").TinyLM(layers=3), NNX_NAMES, "residual", CLEAN, CORRUPTED, metric)
    effects = normalised(found["patched"], found["clean"], found["corrupted"])
    assert len(effects) == 3 and effects[-1][-1] == pytest.approx(1.0, abs=1e-4)
    assert all(row[0] == pytest.approx(0.0, abs=1e-4) for row in effects)
