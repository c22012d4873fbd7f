"""The pieces of a causal language model, found without its class (execute/worker/causal_lm.py):
the logit lens reads the residual stream through them, activation patching replaces their outputs.

Real tiny transformers models (random weights) and the course's trained model's class; each test
checks the found pieces by what they compute, not by their names.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from sphinx_tensorviz.execute.worker.causal_lm import (  # noqa: E402
    NO_NORM,
    PartNames,
    PartsNotFound,
    find_parts,
    first_tensor,
    module_at,
)

pytestmark = pytest.mark.execution

SMALL = dict(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=3, num_attention_heads=4)
MODELS = {
    "llama": lambda: transformers.LlamaForCausalLM(transformers.LlamaConfig(**SMALL, num_key_value_heads=2)),
    "mistral": lambda: transformers.MistralForCausalLM(transformers.MistralConfig(**SMALL, num_key_value_heads=2)),
    "qwen2": lambda: transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**SMALL, num_key_value_heads=2)),
    "gpt2": lambda: transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=32, n_embd=16, n_layer=3, n_head=4, n_positions=32, bos_token_id=0, eos_token_id=0)),
    "gpt-neox": lambda: transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(**SMALL)),
}


def course_model() -> torch.nn.Module:
    path = Path(__file__).parents[1] / "lessons" / "models" / "induction.py"
    spec = importlib.util.spec_from_file_location("induction_for_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_model(seed=0).eval()


@pytest.mark.parametrize("name", [*MODELS, "course"])
def test_the_last_layer_read_out_is_the_models_own_logits(name: str) -> None:
    """Every layer found, in order; the last block's output through the found norm and unembedding
    gives the model's logits (so the lens's last row is what the model predicts)."""
    torch.manual_seed(0)
    model = course_model() if name == "course" else MODELS[name]().eval()
    parts = find_parts(model)
    layers = 2 if name == "course" else 3
    assert len(parts.layers) == layers
    kept: list[torch.Tensor] = []
    handles = [layer.block.register_forward_hook(lambda m, i, o: kept.append(first_tensor(o)))
               for layer in parts.layers]
    ids = torch.tensor([[1, 5, 3, 7, 2, 9]])
    with torch.no_grad():
        out = model(ids)
    for handle in handles:
        handle.remove()
    logits = out.logits if hasattr(out, "logits") else out
    assert len(kept) == layers
    torch.testing.assert_close(parts.read_out(kept[-1]), logits)
    assert (parts.final_norm is None) == (name == "course")


@pytest.mark.parametrize("name", [*MODELS, "course"])
def test_head_slices_are_the_output_projections_input(name: str) -> None:
    """The found head input is the attention's output projection: its input's last axis is heads x
    head width, and zeroing it zeroes the attention's contribution (no bias left out)."""
    model = course_model() if name == "course" else MODELS[name]().eval()
    parts = find_parts(model)
    assert parts.heads == (2 if name == "course" else 4)
    seen: list[tuple[int, ...]] = []
    layer = parts.layers[0]
    handle = layer.head_input.register_forward_pre_hook(lambda m, args: seen.append(tuple(args[0].shape)))
    with torch.no_grad():
        model(torch.tensor([[1, 2, 3, 4]]))
    handle.remove()
    width = 32 if name == "course" else 16
    assert seen == [(1, 4, width)]
    assert layer.attention is not None and layer.head_input in list(layer.attention.modules())
    assert (layer.mlp is None) == (name == "course")


def test_named_pieces_override_the_search() -> None:
    """``:residual: blocks.{i}``-style patterns reach the same modules; a wrong name says which step."""
    model = course_model()
    named = find_parts(model, PartNames(residual="blocks.{i}", head_input="blocks.{i}.attn.out", unembed="unembed"))
    found = find_parts(model)
    assert [layer.block for layer in named.layers] == [layer.block for layer in found.layers]
    assert named.layers[1].head_input is model.blocks[1].attn.out
    with pytest.raises(PartsNotFound, match="'layers'"):
        find_parts(model, PartNames(residual="layers.{i}"))
    assert module_at(model, "blocks.1.attn") is model.blocks[1].attn


def test_a_model_without_layers_says_how_to_name_them() -> None:
    with pytest.raises(PartsNotFound, match=":residual:"):
        find_parts(torch.nn.Sequential(torch.nn.Linear(4, 4)))


def test_pieces_given_as_functions_stand_in_for_the_search() -> None:
    """A model whose unembedding is the embedding's matrix (no module computes it) reads out through
    a function; ``NO_NORM`` says there is no final norm, and no norm is searched for."""

    class Tied(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = torch.nn.Embedding(8, 4)
            self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)])
            self.norm = torch.nn.LayerNorm(4)

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            x = self.embed(ids)
            for layer in self.layers:
                x = layer(x)
            return x @ self.embed.weight.T

    model = Tied()
    with pytest.raises(PartsNotFound, match=":unembed:"):
        find_parts(model)
    parts = find_parts(model, final_norm=NO_NORM, unembed=lambda hidden: hidden @ model.embed.weight.T)
    assert parts.final_norm is None and len(parts.layers) == 2
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        hidden = model.layers[1](model.layers[0](model.embed(ids)))
        torch.testing.assert_close(parts.read_out(hidden), model(ids))
    assert find_parts(model, unembed=parts.unembed).final_norm is model.norm  # the search, where not told


def test_a_final_norm_registered_before_the_layers_is_found() -> None:
    """OPT registers ``final_layer_norm`` before ``layers`` in its decoder: with no norm after the
    layers, the one norm beside them is the final norm, and the read-out is the model's logits."""
    torch.manual_seed(0)
    model = transformers.OPTForCausalLM(transformers.OPTConfig(
        vocab_size=32, hidden_size=16, ffn_dim=32, num_hidden_layers=2, num_attention_heads=2,
        word_embed_proj_dim=16)).eval()
    parts = find_parts(model)
    assert parts.final_norm is model.model.decoder.final_layer_norm
    kept: list[torch.Tensor] = []
    handle = parts.layers[-1].block.register_forward_hook(lambda m, i, o: kept.append(first_tensor(o)))
    with torch.no_grad():
        logits = model(torch.tensor([[1, 5, 3, 7]]), use_cache=False).logits
    handle.remove()
    torch.testing.assert_close(parts.read_out(kept[-1]), logits)
