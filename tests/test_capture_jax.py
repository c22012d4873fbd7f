"""Graph capture of a real JAX function through its jaxpr, no mocks."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from graphlib import TopologicalSorter
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = jax.numpy

from sphinx_tensorviz.features.graph.capture.jax_graph import capture_jax_graph  # noqa: E402

THIS_FILE = str(Path(__file__).resolve())


def tiny_block(x, w_up, w_down):
    """A residual feed-forward block: both ``block/ffn`` nesting and a dotted scope name."""
    with jax.named_scope("block"):
        with jax.named_scope("ffn"):
            hidden = jax.nn.silu(x @ w_up)
            out = hidden @ w_down
        residual = x + out
    with jax.named_scope("head.norm"):
        scale = jnp.sqrt(jnp.mean(residual * residual, axis=-1, keepdims=True) + 1e-6)
    return residual / scale


def args():
    x = jnp.arange(12.0).reshape(3, 4) / 10
    w_up = jnp.ones((4, 8)) / 8
    w_down = jnp.ones((8, 4)) / 4
    return (x, w_up, w_down)


@pytest.fixture(scope="module")
def captured():
    return capture_jax_graph(tiny_block, args(), THIS_FILE)


@pytest.fixture(scope="module")
def nodes(captured):
    return {node["id"]: node for node in captured["graph"]["layers"]}


def test_scopes_become_module_nodes(nodes):
    assert (nodes["block"]["kind"], nodes["block"]["op"], nodes["block"]["parent"]) == ("module", "Module", None)
    assert (nodes["block.ffn"]["kind"], nodes["block.ffn"]["parent"]) == ("module", "block")
    assert (nodes["head"]["kind"], nodes["head"]["parent"]) == ("module", None)
    assert (nodes["head.norm"]["kind"], nodes["head.norm"]["parent"]) == ("module", "head")


def test_equations_become_op_nodes_with_shapes(nodes):
    first = nodes["block.ffn.dot_general_0"]
    assert (first["op"], first["kind"], first["parent"]) == ("dot_general", "layer", "block.ffn")
    assert first["outputs"] == [{"shape": [3, 8], "dtype": "float32"}]
    assert nodes["block.ffn.dot_general_1"]["outputs"] == [{"shape": [3, 4], "dtype": "float32"}]
    silu = nodes["block.ffn.silu"]  # jax.nn.silu (a jitted library function) is a collapsible group
    assert (silu["kind"], silu["group"], silu["op"], silu["parent"]) == ("module", "function", "silu", "block.ffn")
    assert silu["definedAt"]["file"].endswith("jax/_src/nn/functions.py")
    assert {n["op"] for n in nodes.values() if n["parent"] == "block.ffn.silu"} == {"logistic", "mul"}
    assert nodes["block.add_0"]["parent"] == "block"
    assert nodes["head.norm.sqrt_0"]["outputs"] == [{"shape": [3, 1], "dtype": "float32"}]
    assert nodes["div_0"]["parent"] is None
    assert nodes["input"]["params"] == {"shape": [3, 4], "dtype": "float32"}
    assert nodes["input_2"]["params"] == {"shape": [8, 4], "dtype": "float32"}
    assert nodes["output"]["outputs"] == [{"shape": [3, 4], "dtype": "float32"}]


def test_source_lines_point_at_the_calls(nodes):
    lines = Path(THIS_FILE).read_text(encoding="utf-8").splitlines()
    expected = {"block.ffn.dot_general_0": "x @ w_up", "block.ffn.silu": "jax.nn.silu",
                "block.ffn.dot_general_1": "hidden @ w_down", "block.add_0": "x + out",
                "head.norm.sqrt_0": "jnp.sqrt", "div_0": "residual / scale"}
    for node_id, text in expected.items():
        source = nodes[node_id]["source"]
        assert text in "\n".join(lines[source["line"] - 1:source["endLine"]]), node_id


def test_connections_form_a_dag_from_inputs_to_output(captured, nodes):
    successors, order = defaultdict(list), TopologicalSorter({n: () for n in nodes})
    for edge in captured["graph"]["connections"]:
        assert nodes[edge["source"]]["kind"] != "module" and nodes[edge["target"]]["kind"] != "module"
        successors[edge["source"]].append(edge["target"])
        order.add(edge["target"], edge["source"])
    assert len(list(order.static_order())) == len(nodes)  # raises CycleError on a cycle
    reached = set()
    todo = ["input", "input_1", "input_2"]
    while todo:
        node = todo.pop()
        if node not in reached:
            reached.add(node)
            todo.extend(successors[node])
    assert "output" in reached
    assert ("block.ffn.dot_general_0", "block.ffn.silu.logistic_0") in {
        (edge["source"], edge["target"]) for edge in captured["graph"]["connections"]}


def test_output_and_determinism(captured):
    assert jnp.allclose(captured["output"], tiny_block(*args()))
    again = capture_jax_graph(tiny_block, args(), THIS_FILE)
    assert again["graph"] == captured["graph"]
    assert json.loads(json.dumps(captured["graph"], allow_nan=False)) == captured["graph"]


def test_jitted_helper_is_a_function_group_holding_its_scopes():
    @jax.jit
    def helper(z):
        with jax.named_scope("inner"):
            return jnp.tanh(z) * 2.0

    def outer(z):
        with jax.named_scope("outer"):
            return helper(z)

    graph = capture_jax_graph(outer, (jnp.ones((2, 2)),), THIS_FILE)["graph"]
    ids = [node["id"] for node in graph["layers"]]
    assert {"outer.helper", "outer.helper.inner", "outer.helper.inner.tanh_0", "outer.helper.inner.mul_0"} <= set(ids)
    group = next(node for node in graph["layers"] if node["id"] == "outer.helper")
    assert (group["group"], group["parent"], "definedAt" in group) == ("function", "outer", False)
    edges = {(edge["source"], edge["target"]) for edge in graph["connections"]}
    assert {("input", "outer.helper.inner.tanh_0"), ("outer.helper.inner.mul_0", "output")} <= edges


def test_closed_over_weights_are_named_after_their_variables():
    w_up = jnp.ones((4, 8)) / 8
    tables = {"down": jnp.ones((8, 4)) / 4}

    def mlp(x):
        with jax.named_scope("up"):
            h = jax.nn.gelu(x @ w_up)
        return h @ tables["down"]

    graph = capture_jax_graph(mlp, (jnp.ones((2, 4)),), THIS_FILE)["graph"]
    nodes = {node["id"]: node for node in graph["layers"]}
    assert (nodes["w_up"]["op"], nodes["w_up"]["parent"], nodes["w_up"]["outputs"][0]["shape"]) == \
        ("Parameter", "up", [4, 8])
    assert nodes["tables.down"]["op"] == "Parameter"
    assert not [n for n in nodes.values() if n["op"] == "Constant"]
    gelu = nodes["up.gelu"]
    assert gelu["group"] == "function" and "x @ w_up" in Path(THIS_FILE).read_text().splitlines()[gelu["source"]["line"] - 1]


def test_pytree_results_become_named_outputs_as_with_pytorch():
    """A tuple, a scan's ``(carry, ys)``, a dict or a namedtuple: one output node per array,
    named by its path (``output.0``, ``output.aux.loss``), each fed by the op that made it."""
    from collections import namedtuple

    State = namedtuple("State", ["carry", "ys"])

    def scan(x):
        return jax.lax.scan(lambda c, row: (c + row, c * row), jnp.zeros(4), x)

    cases = {
        "tuple": (lambda x: (x.sum(), x * 2), {"output.0": ([], "reduce_sum_0"), "output.1": ([3, 4], "mul_0")}),
        "scan": (scan, {"output.0": ([4], None), "output.1": ([3, 4], None)}),
        "dict": (lambda x: {"logits": x * 2, "aux": {"loss": jnp.mean(x)}},
                 {"output.logits": ([3, 4], "mul_0"), "output.aux.loss": ([], None)}),
        "namedtuple": (lambda x: State(jnp.tanh(x), x - 1), {"output.carry": ([3, 4], "tanh_0"),
                                                             "output.ys": ([3, 4], "sub_0")}),
    }
    x = jnp.arange(12.0).reshape(3, 4)
    for case, (fn, expected) in cases.items():
        captured = capture_jax_graph(fn, (x,), THIS_FILE)
        graph = captured["graph"]
        outputs = {n["id"]: n for n in graph["layers"] if n["kind"] == "output"}
        assert set(outputs) == set(expected), case
        assert [o["id"] for o in graph["outputs"]] == [n["id"] for n in graph["layers"] if n["kind"] == "output"]
        assert {o["name"] for o in graph["outputs"]} == {i.removeprefix("output.") for i in expected}, case
        fed = {(e["source"], e["target"]) for e in graph["connections"]}
        for node_id, (shape, producer) in expected.items():
            assert outputs[node_id]["outputs"] == [{"shape": shape, "dtype": "float32"}], (case, node_id)
            assert outputs[node_id]["label"] == node_id.removeprefix("output."), case
            sources = {s for s, t in fed if t == node_id}
            assert sources and (producer is None or sources == {producer}), (case, node_id, sources)
        leaves = jax.tree_util.tree_leaves(fn(x))
        assert jnp.allclose(captured["output"], leaves[0]), case  # the first array, as PyTorch's first tensor
    bare = capture_jax_graph(lambda x: x * 3, (x,), THIS_FILE)["graph"]
    assert [o["id"] for o in bare["outputs"]] == ["output"]
