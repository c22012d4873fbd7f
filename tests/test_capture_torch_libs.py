"""Graph capture of PyTorch models the project never wrote: transformers' Mixtral from a tiny
config (its experts class is rewritten by a class decorator, its loss helper runs after the head),
and modules wrapped by ``torch.compile``. Real libraries, random weights, no mocks (issue 24)."""

from __future__ import annotations

import importlib.util
import inspect
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402

#: builds and traces transformers models in this process (seconds each)
pytestmark = pytest.mark.execution

MIXTRAL_FILE = Path(inspect.getfile(transformers.MixtralForCausalLM))


def tiny_mixtral():
    config = transformers.MixtralConfig(
        vocab_size=32, hidden_size=16, intermediate_size=24, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, num_local_experts=4, num_experts_per_tok=2, max_position_embeddings=16,
        output_router_logits=True)
    torch.manual_seed(0)
    return transformers.MixtralForCausalLM(config).eval()


@pytest.fixture(scope="module")
def mixtral() -> dict:
    result = capture_torch_graph(tiny_mixtral(), (torch.ones(1, 5, dtype=torch.long),), __file__)
    result["nodes"] = {node["id"]: node for node in result["graph"]["layers"]}
    return result


def feeding(graph: dict, target: str) -> list[str]:
    return [edge["source"] for edge in graph["connections"] if edge["target"] == target]


def test_router_logits_come_from_the_router_not_the_loss(mixtral: dict) -> None:
    """``load_balancing_loss_func`` runs ``layer_gate.to(device)`` (a no-op) after the model: the
    router's logits stay drawn from the router (issue 24, point 16)."""
    nodes = mixtral["nodes"]
    [producer] = feeding(mixtral["graph"], "output.router_logits.0")
    assert nodes[producer]["parent"] == "model.layers.0.mlp.gate", producer
    assert nodes[producer]["op"] == "torch.nn.functional.linear"
    [loss] = feeding(mixtral["graph"], "output.aux_loss")
    assert nodes[loss]["parent"].startswith("load_balancing_loss_func()")
    assert feeding(mixtral["graph"], "output.logits") == ["lm_head"]


def test_decorated_experts_keep_groups_and_construction_lines(mixtral: dict) -> None:
    """``@use_experts_implementation`` wraps ``MixtralExperts.__init__`` and sends ``forward`` to a
    kernel chosen at run time: the kernel and its helpers are function groups inside the experts,
    and the expert weights link to ``self.gate_up_proj = ...`` (issue 24, point 17)."""
    nodes = mixtral["nodes"]
    experts = "model.layers.0.mlp.experts"
    kernel = [node for node in nodes.values()
              if node.get("group") == "function" and node["parent"] == experts]
    assert kernel, "the experts kernel is a function group"
    inside = [node for node in nodes.values() if node["parent"] and node["parent"].startswith(f"{experts}.")
              and node.get("group") == "function"]
    assert inside, "the kernel's helpers are groups inside it"
    loose = [node["id"] for node in nodes.values() if node["parent"] == experts and node["kind"] == "layer"
             and node["op"] not in ("Parameter", "Buffer")]
    assert not loose, f"ops lie loose in the experts box: {loose}"
    lines = MIXTRAL_FILE.read_text("utf-8").splitlines()
    for name in ("gate_up_proj", "down_proj", "act_fn"):
        source = nodes[f"{experts}.{name}"]["source"]
        assert source["file"] == "transformers/models/mixtral/modeling_mixtral.py"
        assert f"self.{name} =" in lines[source["line"] - 1], name


COMPILED = '''
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.act = nn.GELU()

        def forward(self, x):
            return self.act(self.lin(x)) * 2


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Block()
            self.second = torch.compile(Block())

        def forward(self, x):
            return self.second(self.first(x)) + 1


    @torch.compile
    def helper(t):
        return torch.relu(t) + 1


    class CallsCompiled(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            print("a graph break before the compiled helper")
            return helper(y) * 3
'''


@pytest.fixture(scope="module")
def compiled_models(tmp_path_factory: pytest.TempPathFactory):
    source = tmp_path_factory.mktemp("compiled") / "compiled_models.py"
    source.write_text(textwrap.dedent(COMPILED), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("compiled_models", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, source


def test_a_compiled_module_is_traced_as_the_module_it_wraps(compiled_models) -> None:
    """``torch.compile(module)`` failed inside Dynamo on the capture's own pre-hook; now the eager
    graph of ``_orig_mod`` is recorded, named as the author named it, and marked ``compiled``
    (issue 24, point 18)."""
    module, source = compiled_models
    x = torch.ones(2, 4)
    torch.manual_seed(0)
    eager = capture_torch_graph(module.Stack().eval(), (x,), str(source))["graph"]
    torch.manual_seed(0)
    model = torch.compile(module.Stack().eval())
    result = capture_torch_graph(model, (x,), str(source))
    graph = result["graph"]
    assert graph.pop("compiled") is True and "compiled" not in eager
    assert graph == eager  # the same nodes, ids, sources and edges as the eager model
    ids = {node["id"] for node in graph["layers"]}
    assert {"first.lin", "second.lin", "second.act", "second.mul_0", "add_0"} <= ids
    assert not [node_id for node_id in ids if "_orig_mod" in node_id]
    lines = source.read_text("utf-8").splitlines()
    second = next(node for node in graph["layers"] if node["id"] == "second")
    assert "self.second = torch.compile(Block())" in lines[second["source"]["line"] - 1]
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_a_compiled_function_shows_no_dynamo_resume_group(compiled_models) -> None:
    """An eager module that calls a compiled function: the function is one group with its ops, and
    no ``torch_dynamo_resume_in_...`` frame becomes a group (issue 24, point 18)."""
    module, source = compiled_models
    torch.manual_seed(0)
    result = capture_torch_graph(module.CallsCompiled().eval(), (torch.ones(2, 4),), str(source))
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    groups = [node_id for node_id, node in nodes.items() if node.get("group")]
    assert groups == ["helper()"], groups
    assert nodes["relu_0"]["parent"] == "helper()" and nodes["add_0"]["parent"] == "helper()"
    assert nodes["mul_0"]["parent"] is None
    assert result["graph"]["compiled"] is True
    assert "a graph break" not in str(result["graph"])


def test_a_checkpoint_spelt_as_in_transformers_4_lists_the_closest_module_paths() -> None:
    """transformers 5 renamed ViT's ``encoder.layer.N`` to ``layers.N``: the old spelling names the
    new paths, where it used to say only ``checkpoints produced no tensor`` (issue 24, point 8)."""
    config = transformers.ViTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=24,
                                    image_size=8, patch_size=4, num_channels=3)
    torch.manual_seed(0)
    model = transformers.ViTModel(config).eval()
    assert "layers.0" in dict(model.named_modules())  # the renamed path this test is about
    with pytest.raises(ValueError) as caught:
        capture_torch_graph(model, (torch.zeros(1, 3, 8, 8),), __file__, checkpoints=("encoder.layer.0",))
    message = str(caught.value)
    assert message.startswith("checkpoint 'encoder.layer.0' is not a module or node of the graph")
    assert message.partition("nodes: ")[2].split(", ")[0] == "layers.0"


def test_mamba_mixer_groups_are_named_with_their_class_and_layer_weights_link_to_the_layer() -> None:
    """Mamba's mixer runs an activation module's ``forward`` as a plain call, which was the group
    ``...mixer.forward()``; and it uses ``self.conv1d.weight`` directly, which had no source line
    (issue 24, point 17)."""
    config = transformers.MambaConfig(vocab_size=32, hidden_size=16, state_size=4, num_hidden_layers=1, expand=2,
                                      conv_kernel=3, time_step_rank=4)
    torch.manual_seed(0)
    model = transformers.MambaModel(config).eval()
    result = capture_torch_graph(model, (torch.ones(1, 5, dtype=torch.long),), __file__, kwargs={"use_cache": False})
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    groups = [node for node in nodes.values() if node.get("group") == "function"]
    assert groups and all(node["id"].endswith(f"{node['function']}()") for node in groups)
    methods = [node["id"] for node in groups if node["function"].endswith(".forward")]
    assert methods and not [node["id"] for node in groups if node["function"] == "forward"], methods
    lines = Path(inspect.getfile(transformers.MambaModel)).read_text("utf-8").splitlines()
    for weight in ("layers.0.mixer.conv1d.weight", "layers.0.mixer.conv1d.bias"):
        source = nodes[weight]["source"]
        assert "self.conv1d = nn.Conv1d(" in lines[source["line"] - 1], weight


def test_a_checkpoint_named_by_its_op_alone_lists_the_ops_of_that_name() -> None:
    """An author who wants GPT-2's attention weights writes ``softmax``; the message listed only
    the top-level modules (``wte, wpe, drop, h, ln_f``), not ``h.0.attn.softmax_0``. A name of one
    part is compared with the last part of each id too, and the id it suggests can be written."""
    config = transformers.GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=2, n_head=4,
                                     bos_token_id=0, eos_token_id=0)
    config._attn_implementation = "eager"  # the attention weights are a softmax op, not inside SDPA
    torch.manual_seed(0)
    model = transformers.GPT2Model(config).eval()
    ids = (torch.ones(1, 6, dtype=torch.long),)
    with pytest.raises(ValueError) as caught:
        capture_torch_graph(model, ids, __file__, kwargs={"use_cache": False}, checkpoints=("softmax",))
    message = str(caught.value)
    assert message.startswith("checkpoint 'softmax' is not a module or node of the graph; the closest"), message
    suggested = message.partition("nodes: ")[2].split(", ")
    assert set(suggested[:2]) == {"h.0.attn.softmax_0", "h.1.attn.softmax_0"}, suggested
    result = capture_torch_graph(model, ids, __file__, kwargs={"use_cache": False}, checkpoints=(suggested[0],))
    assert list(result["activations"]) == [suggested[0]]


def test_a_checkpoint_on_a_layer_whose_weights_a_function_uses_names_that_op() -> None:
    """Mamba's mixer never calls ``self.conv1d``: it passes ``self.conv1d.weight`` to ``F.conv1d``.
    ``:checkpoints: layers.0.mixer.conv1d`` said only 'never ran ... checkpoint a module that
    runs'; it names the op that used the layer's weights, and that op can be checkpointed."""
    config = transformers.MambaConfig(vocab_size=32, hidden_size=16, state_size=4, num_hidden_layers=1, expand=2,
                                      conv_kernel=3, time_step_rank=4)
    torch.manual_seed(0)
    model = transformers.MambaModel(config).eval()
    ids = (torch.ones(1, 5, dtype=torch.long),)
    with pytest.raises(ValueError) as caught:
        capture_torch_graph(model, ids, __file__, kwargs={"use_cache": False}, checkpoints=("layers.0.mixer.conv1d",))
    message = str(caught.value)
    assert message.startswith("checkpoint 'layers.0.mixer.conv1d' is a module of the model that never ran"), message
    named = message.partition("its weights are used by ")[2].partition(" ")[0].strip(",;")
    assert named, message
    result = capture_torch_graph(model, ids, __file__, kwargs={"use_cache": False}, checkpoints=(named,))
    assert tuple(result["activations"][named].shape) == (1, 32, 7)  # 32 channels, 5 tokens + 2 of padding


def test_a_softmax_checkpoint_in_a_model_using_sdpa_says_how_to_record_the_weights() -> None:
    """transformers 5 runs attention in ``scaled_dot_product_attention`` by default, whose softmax
    is never a node: ``:checkpoints: softmax`` listed the top-level modules and nothing else. The
    message names the SDPA ops and the eager attention that records the weights."""
    config = transformers.GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=1, n_head=4,
                                     bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2Model(config).eval()
    ids = (torch.ones(1, 6, dtype=torch.long),)
    with pytest.raises(ValueError) as caught:
        capture_torch_graph(model, ids, __file__, kwargs={"use_cache": False}, checkpoints=("softmax",))
    message = str(caught.value)
    assert "its softmax is inside scaled_dot_product_attention (h.0.attn." in message, message
    assert 'attn_implementation="eager"' in message
    config._attn_implementation = "eager"  # following the advice records the weights
    eager = transformers.GPT2Model(config).eval()
    result = capture_torch_graph(eager, ids, __file__, kwargs={"use_cache": False}, checkpoints=("h.0.attn.softmax_0",))
    assert tuple(result["activations"]["h.0.attn.softmax_0"].shape) == (1, 4, 6, 6)
