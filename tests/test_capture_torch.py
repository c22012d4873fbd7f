"""Graph capture of a real PyTorch forward pass (TinyLlama from the lessons), no mocks."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from collections import defaultdict
from graphlib import TopologicalSorter
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402

ROOT = Path(__file__).parents[1]
MODEL_FILE = ROOT / "lessons" / "models" / "tiny_llama.py"

# id -> (op, params, parent), as in the seed model page (Softmax also records its dim).
EXPECTED = {
    "embedding": ("Embedding", {"num_embeddings": 32, "embedding_dim": 16}, None),
    "block": ("Module", {}, None),
    "block.attention_norm": ("Module", {}, "block"),
    "block.attention": ("Module", {}, "block"),
    "block.attention.query": ("Linear", {"in_features": 16, "out_features": 16, "bias": False}, "block.attention"),
    "block.attention.key": ("Linear", {"in_features": 16, "out_features": 16, "bias": False}, "block.attention"),
    "block.attention.value": ("Linear", {"in_features": 16, "out_features": 16, "bias": False}, "block.attention"),
    "block.attention.project": ("Linear", {"in_features": 16, "out_features": 16, "bias": False},
                                "block.attention"),
    "block.attention.query_rope": ("Module", {}, "block.attention"),
    "block.attention.key_rope": ("Module", {}, "block.attention"),
    "block.attention.softmax": ("Softmax", {"dim": -1}, "block.attention"),
    "block.ffn_norm": ("Module", {}, "block"),
    "block.ffn": ("Module", {}, "block"),
    "block.ffn.gate": ("Linear", {"in_features": 16, "out_features": 40, "bias": False}, "block.ffn"),
    "block.ffn.up": ("Linear", {"in_features": 16, "out_features": 40, "bias": False}, "block.ffn"),
    "block.ffn.silu": ("SiLU", {}, "block.ffn"),
    "block.ffn.down": ("Linear", {"in_features": 40, "out_features": 16, "bias": False}, "block.ffn"),
    "final_norm": ("Module", {}, None),
    "lm_head": ("Linear", {"in_features": 16, "out_features": 32, "bias": False}, None),
    "block.attention_norm.gain": ("Parameter", {}, "block.attention_norm"),
    "block.ffn_norm.gain": ("Parameter", {}, "block.ffn_norm"),
    "final_norm.gain": ("Parameter", {}, "final_norm"),
    "input": ("Input", {"shape": [1, 6], "dtype": "int64"}, None),
    "output": ("Output", {}, None),
}

# What the source text of an op must contain, by the short name in its id.
OP_TEXT = {"mul": ("mul", "*"), "add": ("add", "+"), "sub": ("sub", "-"), "div": ("div", "/"),
           "matmul": ("matmul", "@"), "neg": ("-",), "pow": ("pow", "**"), "getitem": ("[",)}


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lesson():
    return load_module(MODEL_FILE, "tiny_llama_lesson")


def make_model(lesson):
    torch.manual_seed(0)
    return lesson.TinyLlama(vocab=32, width=16, heads=4, hidden=40).eval()


def capture(model, **kwargs):
    tokens = torch.ones(1, 6, dtype=torch.long)
    return capture_torch_graph(model, (tokens,), str(MODEL_FILE), **kwargs)


@pytest.fixture(scope="module")
def captured(lesson):
    return capture(make_model(lesson), checkpoints=("embedding", "block.attention", "block.ffn.mul_0"))


@pytest.fixture(scope="module")
def nodes(captured):
    return {node["id"]: node for node in captured["graph"]["layers"]}


def assert_dag_from_input_to_output(graph):
    """Edges join existing non-module nodes, have no cycle, and lead from every input to output."""
    kinds = {node["id"]: node["kind"] for node in graph["layers"]}
    assert len(kinds) == len(graph["layers"]), "node ids are unique"
    successors, order = defaultdict(list), TopologicalSorter({node: () for node in kinds})
    for index, edge in enumerate(graph["connections"], start=1):
        assert edge["id"] == f"edge-{index}"
        assert kinds[edge["source"]] != "module" and kinds[edge["target"]] != "module"
        successors[edge["source"]].append(edge["target"])
        order.add(edge["target"], edge["source"])
    assert len(list(order.static_order())) == len(kinds)  # raises CycleError on a cycle

    def reaches_output(start):
        seen, todo = {start}, [start]
        while todo:
            for target in successors[todo.pop()]:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        return any(kinds[node] == "output" for node in seen)  # outputs are named: output, output.logits...

    for node, kind in kinds.items():
        if kind == "input":
            assert reaches_output(node)
        elif kind == "layer":
            assert reaches_output(node), f"{node} does not contribute to the output"


def test_every_named_node_matches_the_seed(nodes):
    for node_id, (op, params, parent) in EXPECTED.items():
        node = nodes[node_id]
        assert (node["op"], node["params"], node["parent"]) == (op, params, parent), node_id
        assert node["label"] == node_id
    assert nodes["input"]["kind"] == "input" and nodes["output"]["kind"] == "output"
    assert nodes["block.ffn.up"]["kind"] == "layer" and nodes["block"]["kind"] == "module"


def test_rope_ops_are_recorded_under_their_module(nodes):
    for rope in ("block.attention.query_rope", "block.attention.key_rope"):
        inside = {node["label"].rpartition("_")[0] for node in nodes.values() if node["parent"] == rope}
        assert {"mul", "sub", "add", "stack", "flatten", "arange", "cos", "sin"} <= inside
        assert nodes[f"{rope}.mul_0"]["op"] == "torch.mul"
        assert nodes[f"{rope}.sub_0"]["op"] == "torch.sub"
        assert nodes[f"{rope}.stack_0"]["op"] == "torch.stack"
        assert nodes[f"{rope}.stack_0"]["params"] == {"dim": -1}
        assert nodes[f"{rope}.flatten_0"]["op"] == "Flatten"
        assert nodes[f"{rope}.flatten_0"]["params"] == {"start_dim": -2}
        assert nodes[f"{rope}.flatten_0"]["outputs"] == [{"shape": [1, 4, 6, 4], "dtype": "float32"}]


def test_residual_adds_and_swiglu_multiply(nodes, captured):
    assert nodes["block.add_0"]["op"] == "torch.add"
    assert nodes["block.add_1"]["op"] == "torch.add"
    edges = {(edge["source"], edge["target"]) for edge in captured["graph"]["connections"]}
    assert {("block.ffn.silu", "block.ffn.mul_0"), ("block.ffn.up", "block.ffn.mul_0"),
            ("block.ffn.mul_0", "block.ffn.down"), ("embedding", "block.add_0"),
            ("block.attention.project", "block.add_0"), ("block.ffn.down", "block.add_1"),
            ("input", "embedding"), ("lm_head", "output"),
            ("block.attention_norm.gain", "block.attention_norm.mul_1")} <= edges


def test_nothing_inside_torch_nn_layers_is_recorded(nodes):
    layers = {node_id for node_id, node in nodes.items() if node["op"] not in ("Module",) and node["label"] == node_id}
    assert not [node for node in nodes.values() if node["parent"] in layers]
    assert not [node for node in nodes.values() if node["label"].startswith(("linear_", "embedding_", "silu_", "softmax_"))]


def test_shapes_and_dtypes(nodes, captured):
    assert captured["output"].shape == (1, 6, 32)
    assert nodes["output"]["outputs"] == [{"shape": [1, 6, 32], "dtype": "float32"}]
    assert nodes["input"]["outputs"] == [{"shape": [1, 6], "dtype": "int64"}]
    assert nodes["embedding"]["outputs"] == [{"shape": [1, 6, 16], "dtype": "float32"}]
    assert nodes["block.ffn.up"]["outputs"] == [{"shape": [1, 6, 40], "dtype": "float32"}]
    assert nodes["block.attention"]["outputs"] == [{"shape": [1, 6, 16], "dtype": "float32"}]
    assert nodes["block.attention_norm.gain"]["outputs"] == [{"shape": [16], "dtype": "float32"}]
    for node in nodes.values():
        if node["kind"] != "module":
            assert node["outputs"], node["id"]


def test_source_lines_point_at_the_right_text(nodes):
    lines = MODEL_FILE.read_text(encoding="utf-8").splitlines()
    for node_id, node in nodes.items():
        if node["kind"] in ("input", "output"):
            continue
        source = node["source"]
        assert 1 <= source["line"] <= source["endLine"] <= len(lines), node_id
        text = "\n".join(lines[source["line"] - 1:source["endLine"]])
        if node.get("group") == "function":  # a helper function: its def line
            assert f"def {node['function'].rpartition('.')[2]}(" in text, (node_id, text)
        elif node["label"] != node_id:  # an op, drawn as mul_0 inside its module
            short = node["label"].rpartition("_")[0]
            assert any(token in text for token in OP_TEXT.get(short, (short,))), (node_id, text)
        else:
            attribute = node_id.rpartition(".")[2]
            assert f"self.{attribute} =" in text, (node_id, text)
    assert "self.up = nn.Linear" in lines[nodes["block.ffn.up"]["source"]["line"] - 1]
    assert "self.gain = nn.Parameter" in lines[nodes["final_norm.gain"]["source"]["line"] - 1]
    assert "torch.mul(self.silu" in lines[nodes["block.ffn.mul_0"]["source"]["line"] - 1]
    stack = nodes["block.attention.query_rope.stack_0"]["source"]
    assert stack["endLine"] > stack["line"], "a multi-line call spans several lines"


def test_connections_form_a_dag_from_input_to_output(captured):
    assert_dag_from_input_to_output(captured["graph"])


def test_capture_is_deterministic_and_json(lesson, captured):
    again = capture(make_model(lesson), checkpoints=("embedding", "block.attention", "block.ffn.mul_0"))
    assert again["graph"] == captured["graph"]
    assert torch.equal(again["output"], captured["output"])
    assert json.loads(json.dumps(captured["graph"], allow_nan=False)) == captured["graph"]


def test_checkpoints_and_cleanup(lesson, captured):
    model = make_model(lesson)
    result = capture(model, checkpoints=("block.attention", "embedding"))
    tokens = torch.ones(1, 6, dtype=torch.long)
    with torch.no_grad():
        assert torch.equal(result["activations"]["embedding"], model.embedding(tokens))
    assert list(result["activations"]) == ["block.attention", "embedding"]
    assert result["activations"]["block.attention"].shape == (1, 6, 16)
    assert captured["activations"]["block.ffn.mul_0"].shape == (1, 6, 40)
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())
    with pytest.raises(ValueError, match="no_such_module"):
        capture(model, checkpoints=("no_such_module",))
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


def test_the_four_checks_pass(lesson):
    model = make_model(lesson)
    for check in (lesson.check_causal, lesson.check_zero_projection_identity, lesson.check_rope_norm,
                  lesson.check_prefix):
        result = check(model)
        assert result["passed"] is True, (check.__name__, result)
        assert isinstance(result["value"], float) and result["description"]


def test_repeated_layers_root_ops_buffers_and_unknown_tensors(tmp_path):
    source = tmp_path / "odd_model.py"
    source.write_text(textwrap.dedent('''
        import torch
        from torch import nn

        CONSTANT = torch.full((3,), 2.0)

        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("factor", torch.tensor(0.5))

            def forward(self, x):
                return x * self.factor

        class Odd(nn.Module):
            def __init__(self):
                super().__init__()
                self.shared = nn.Linear(3, 3)
                self.layers = nn.Sequential(Scale(), nn.GELU(approximate="tanh"))

            def forward(self, x, y):
                x = self.shared(self.shared(x))
                x = torch.add(x, CONSTANT)
                x[0] = 0.0
                return self.layers(x) * y, x.shape
    '''), encoding="utf-8")
    module = load_module(source, "odd_model")
    torch.manual_seed(0)
    model = module.Odd().eval()
    result = capture_torch_graph(model, (torch.ones(2, 3), torch.ones(2, 3)), str(source))
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    assert nodes["shared"]["params"] == {"in_features": 3, "out_features": 3, "bias": True}
    assert nodes["shared:1"]["op"] == "Linear"
    assert nodes["layers"]["kind"] == "module"
    assert (nodes["layers.0"]["kind"], nodes["layers.0"]["parent"]) == ("module", "layers")
    assert nodes["layers.1"]["params"] == {"approximate": "tanh"}
    assert nodes["layers.1"]["parent"] == "layers"
    assert nodes["layers.0.factor"]["op"] == "Buffer"
    assert nodes["python_0"]["op"] == "Python"  # the module-level CONSTANT
    assert nodes["setitem_0"]["op"] == "Tensor.__setitem__"
    assert nodes["mul_0"]["parent"] is None
    assert nodes["input_1"]["params"] == {"shape": [2, 3], "dtype": "float32"}
    lines = source.read_text(encoding="utf-8").splitlines()
    assert "self.layers = nn.Sequential" in lines[nodes["layers.1"]["source"]["line"] - 1]
    assert "source" not in nodes["layers.0.factor"]  # register_buffer(): no assignment line to show
    assert nodes["layers.0.factor"]["parent"] == "layers.0"
    assert nodes["layers.0.mul_0"]["parent"] == "layers.0"
    assert nodes["output.0"]["kind"] == "output" and "output" not in nodes  # the tuple's tensor; x.shape is no output
    assert result["graph"]["outputs"] == [{"name": "0", "id": "output.0", "type": "Tensor"}]
    assert_dag_from_input_to_output(result["graph"])


def capture_source(tmp_path, name, text, factory, *inputs, **kwargs):
    """Write ``text`` as a model file, build ``factory`` from it and capture one call."""
    source = tmp_path / f"{name}.py"
    source.write_text(textwrap.dedent(text), encoding="utf-8")
    module = load_module(source, name)
    torch.manual_seed(0)
    model = getattr(module, factory)().eval()
    return capture_torch_graph(model, inputs, str(source), **kwargs), source


def producers_of_outputs(graph):
    return {edge["target"]: edge["source"] for edge in graph["connections"]
            if edge["target"].startswith("output")}


def test_a_no_op_in_a_later_helper_does_not_become_the_producer(tmp_path):
    """``.to()`` to the same device returns its input: it computes nothing, so ``logits`` stays
    drawn from the head, not from ``aux_loss()``'s ``to_0`` (issue 24, point 16)."""
    result, _ = capture_source(tmp_path, "aux_model", '''
        import torch
        from torch import nn

        def aux_loss(t):
            return t.to("cpu").square().mean()

        class WithAux(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(4, 3)

            def forward(self, x):
                logits = self.head(x)
                same = logits.contiguous().float().detach().requires_grad_(False)
                return {"logits": logits, "aux": aux_loss(logits), "same": same}
    ''', "WithAux", torch.ones(2, 4))
    graph = result["graph"]
    nodes = {node["id"]: node for node in graph["layers"]}
    feeds = producers_of_outputs(graph)
    assert feeds["output.logits"] == "head"
    assert nodes[feeds["output.aux"]]["parent"] == "aux_loss()"
    assert nodes[feeds["output.same"]]["op"] == "Tensor.detach"  # a new tensor: drawn, fed by the head
    assert not [node_id for node_id in nodes if node_id.startswith(("to_", "contiguous_", "float_"))]
    edges = {(edge["source"], edge["target"]) for edge in graph["connections"]}
    assert {("head", "square_0"), ("square_0", "mean_0"), ("mean_0", "output.aux")} <= edges
    assert_dag_from_input_to_output(graph)


def test_in_place_ops_still_take_over_their_tensor(tmp_path):
    """An op that returns its input *changed* (``add_``, ``x[0] = ...``) is the new producer."""
    result, _ = capture_source(tmp_path, "inplace_model", '''
        import torch
        from torch import nn

        class InPlace(nn.Module):
            def forward(self, x):
                y = x * 2
                y.add_(1)
                y[0] = 0.0
                return y.relu_()
    ''', "InPlace", torch.ones(2, 3))
    edges = {(edge["source"], edge["target"]) for edge in result["graph"]["connections"]}
    assert {("mul_0", "add_0"), ("add_0", "setitem_0"), ("setitem_0", "relu_0"), ("relu_0", "output")} <= edges


REDIRECTED = '''
    import functools

    import torch
    from torch import nn


    def redirect_forward(cls):
        """As transformers' ``use_experts_implementation``: wrap ``__init__``, send ``forward`` elsewhere."""
        original_init, original_forward = cls.__init__, cls.forward

        @functools.wraps(original_init)
        def __init__(self, *args, **kwargs):
            original_init(self, *args, **kwargs)
            self.implementation = "fused"

        @functools.wraps(original_forward)
        def forward(self, *args, **kwargs):
            return IMPLEMENTATIONS.get(self.implementation, original_forward)(self, *args, **kwargs)

        cls.__init__, cls.forward = __init__, forward
        return cls


    def scale(t):
        return t * 2


    def fused_forward(self, x):
        return scale(self.proj(x)) * self.gain


    IMPLEMENTATIONS = {"fused": fused_forward}


    @redirect_forward
    class Experts(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)
            self.gain = nn.Parameter(torch.ones(4))

        def forward(self, x):
            return self.proj(x)


    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad):
            return grad


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = Experts()

        def forward(self, x):
            return Square.apply(self.experts(x))
'''


def test_a_redirected_forward_keeps_its_groups_and_construction_lines(tmp_path):
    """A ``functools.wraps`` class decorator that redirects ``forward`` and wraps ``__init__``
    keeps the function groups under the module and the lines of ``self.x = ...`` (issue 24, 17)."""
    result, source = capture_source(tmp_path, "redirected", REDIRECTED, "Model", torch.ones(2, 4))
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    lines = source.read_text(encoding="utf-8").splitlines()
    for node_id, text in (("experts.proj", "self.proj = nn.Linear(4, 4)"),
                          ("experts.gain", "self.gain = nn.Parameter")):
        assert text in lines[nodes[node_id]["source"]["line"] - 1], node_id
    group, helper = nodes["experts.fused_forward()"], nodes["experts.scale()"]
    assert (group["parent"], group["group"], group["label"]) == ("experts", "function", "fused_forward()")
    assert (helper["parent"], helper["label"]) == ("experts.fused_forward()", "scale()")
    assert nodes["experts.mul_0"]["parent"] == "experts.scale()"
    assert nodes["experts.mul_1"]["parent"] == "experts.fused_forward()"
    assert_dag_from_input_to_output(result["graph"])


def test_method_groups_are_named_with_their_class(tmp_path):
    """A custom ``autograd.Function`` is ``Square.forward()``, in its id as in its label."""
    result, source = capture_source(tmp_path, "redirected_too", REDIRECTED, "Model", torch.ones(2, 4))
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    group = nodes["Square.forward()"]
    assert (group["label"], group["function"], group["parent"]) == ("Square.forward()", "Square.forward", None)
    assert nodes["mul_0"]["parent"] == "Square.forward()"
    lines = source.read_text(encoding="utf-8").splitlines()[group["source"]["line"] - 1:group["source"]["endLine"]]
    assert lines[-1].strip() == "def forward(ctx, x):"  # from its decorator to its def
    assert [node["id"] for node in nodes.values() if node.get("group")] == [
        "experts.fused_forward()", "experts.scale()", "Square.forward()"]


def test_a_checkpoint_that_records_nothing_says_why(tmp_path):
    """A typo lists the closest module paths; a module that exists but never ran says so; one
    inside a torch.nn layer names the layer (issue 24, points 8 and 19)."""
    source = tmp_path / "unused_model.py"
    source.write_text(textwrap.dedent('''
        import torch
        from torch import nn

        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)

            def forward(self, x):
                return self.proj(x)

        class Unused(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = nn.ModuleList([Layer(), Layer()])
                self.spare = nn.Linear(4, 4)
                self.attention = nn.MultiheadAttention(4, 2, batch_first=True)

            def forward(self, x):
                if x.sum() < 0:
                    x = self.spare(x)
                for layer in self.layers:
                    x = layer(x)
                return self.attention(x, x, x)[0]
    '''), encoding="utf-8")
    module = load_module(source, "unused_model")
    model = module.Unused().eval()
    x = torch.ones(1, 3, 4)

    def problem(*names):
        with pytest.raises(ValueError) as caught:
            capture_torch_graph(model, (x,), str(source), checkpoints=names)
        return str(caught.value)

    typo = problem("layer.0")
    assert typo.startswith("checkpoint 'layer.0' is not a module or node of the graph; the closest module paths")
    assert typo.partition("nodes: ")[2].split(", ")[0] == "layers.0"
    never = problem("spare")
    assert "'spare' is a module of the model that never ran in this forward pass" in never
    assert "closest" not in never
    inside = problem("attention.out_proj")
    assert "is inside the torch.nn layer 'attention', whose insides are not recorded" in inside
    assert "its top-level modules: layers, spare, attention" in problem("zzz")
    both = problem("spare", "layers.1.proj", "layers.9")
    assert both.count("checkpoint '") == 2 and "'layers.1.proj'" not in both
    assert capture_torch_graph(model, (x,), str(source), checkpoints=("layers.1.proj",))["activations"]


def test_inference_tensors_tell_no_ops_from_in_place_ops_by_name(tmp_path):
    """Inference-mode tensors keep no version counter: a trailing ``_`` marks an in-place op."""
    result, _ = capture_source(tmp_path, "inference_model", '''
        import torch
        from torch import nn

        class Inference(nn.Module):
            def forward(self, x):
                with torch.inference_mode():
                    y = torch.ones_like(x)
                    y = y.to(torch.float32)
                    y.mul_(3)
                return x + y
    ''', "Inference", torch.ones(2, 3))
    ids = {node["id"] for node in result["graph"]["layers"]}
    assert {"ones_like_0", "mul_0", "add_0"} <= ids and "to_0" not in ids
    edges = {(edge["source"], edge["target"]) for edge in result["graph"]["connections"]}
    assert {("ones_like_0", "mul_0"), ("mul_0", "add_0")} <= edges


def test_a_decorator_shared_by_forward_and_a_helper_keeps_the_groups_between(tmp_path):
    """A decorator's wrapper is one code object for all it decorates: when ``forward`` and a helper
    both carry it, the helper's wrapper is not the module's entry, and ``outer()`` still holds
    ``inner()``."""
    result, _ = capture_source(tmp_path, "shared_wrapper", '''
        import functools

        import torch
        from torch import nn

        def logged(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper

        @logged
        def inner(x):
            return x * 2

        def outer(x):
            return inner(x) + 1

        class Logged(nn.Module):
            @logged
            def forward(self, x):
                return outer(x)
    ''', "Logged", torch.ones(2, 3))
    nodes = {node["id"]: node for node in result["graph"]["layers"]}
    assert (nodes["outer()"]["parent"], nodes["inner()"]["parent"]) == (None, "outer()")
    assert (nodes["mul_0"]["parent"], nodes["add_0"]["parent"]) == ("inner()", "outer()")
