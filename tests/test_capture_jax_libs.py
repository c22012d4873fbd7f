"""Graph capture of models written with Flax NNX, Flax Linen and Equinox: the libraries' own
module paths, parameter names and functions reach the graph, under jit, vmap, grad and scan.

Real libraries, tiny models with random weights (tests/roots/test-graph-jaxlibs/models).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
pytest.importorskip("flax")
pytest.importorskip("equinox")
jnp = jax.numpy

from sphinx_tensorviz.features.graph.capture.jax_graph import capture_jax_graph  # noqa: E402
from test_graph_build import artifacts_by_function, copy_root, sphinx_build  # noqa: E402

#: every test traces real Flax/Equinox models under jit (seconds each); the two that build pages are also sphinx
pytestmark = pytest.mark.execution

MODELS = Path(__file__).parent / "roots" / "test-graph-jaxlibs" / "models" / "jaxlibs.py"


@pytest.fixture(scope="module")
def models():
    spec = importlib.util.spec_from_file_location("jaxlibs_models", MODELS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def capture(fn, *shapes, checkpoints=()):
    args = tuple(jax.random.normal(jax.random.PRNGKey(i), shape) for i, shape in enumerate(shapes))
    captured = capture_jax_graph(fn, args, str(MODELS), checkpoints=checkpoints)
    return captured, {node["id"]: node for node in captured["graph"]["layers"]}


def modules(nodes):
    return {i: n for i, n in nodes.items() if n["kind"] == "module" and "group" not in n}


def test_nnx_paths_nest_and_repeated_layers_stay_apart(models):
    captured, nodes = capture(models.nnx_mlp(), (3, 8), checkpoints=("layers.0", "layers.1.linear"))
    found = modules(nodes)
    assert {"layers.0", "layers.1", "layers.0.linear", "layers.1.out", "layers.1.norm", "head"} <= set(found)
    assert (found["layers.1.linear"]["parent"], found["layers.1"]["parent"]) == ("layers.1", None)
    assert found["layers.0.linear"]["op"] == "Linear" and found["layers.0"]["op"] == "Block"
    kernel = nodes["layers.0.linear.kernel"]
    assert (kernel["op"], kernel["parent"], kernel["outputs"][0]["shape"]) == ("Parameter", "layers.0.linear", [8, 16])
    assert found["layers.0.linear"]["params"]["parameters"] == 8 * 16 + 16
    assert not [n for n in nodes.values() if n["op"] == "Constant"]
    gelu = nodes["layers.0.gelu"]
    assert (gelu["group"], gelu["parent"]) == ("function", "layers.0")
    assert gelu["definedAt"]["file"].endswith("jax/_src/nn/functions.py")
    lines = MODELS.read_text("utf-8").splitlines()
    assert "jax.nn.gelu" in lines[gelu["source"]["line"] - 1]
    assert nodes["rms_scale"]["group"] == "function" and "definedAt" not in nodes["rms_scale"]
    assert nodes["softmax"]["group"] == "function"
    assert captured["activations"]["layers.0"].shape == (3, 8)
    assert captured["activations"]["layers.1.linear"].shape == (3, 16)
    # the checkpoint is the block's output: the input of the next block's norm
    direct = models.nnx_mlp().layers[0](jax.random.normal(jax.random.PRNGKey(0), (3, 8)))
    assert jnp.allclose(captured["activations"]["layers.0"], direct, atol=1e-5)


def test_same_names_under_jit_vmap_and_grad(models):
    plain = set(modules(capture(models.nnx_mlp(), (3, 8))[1]))
    jitted = set(modules(capture(models.nnx_mlp_jit(), (3, 8))[1]))
    model = models.nnx_mlp()
    graded_capture, graded = capture(jax.grad(lambda x: model(x).sum()), (3, 8), checkpoints=("layers.1",))
    assert plain == jitted == set(modules(graded)) and "layers.1.out" in plain
    assert graded_capture["activations"]["layers.1"].shape == (3, 8)


def test_scan_over_stacked_layers_is_drawn_once_marked_with_its_length(models):
    captured, nodes = capture(models.eqx_scan(depth=3), (8,))
    scans = [n for n in nodes.values() if n.get("group") == "scan"]
    assert len(scans) == 1 and scans[0]["params"] == {"length": 3} and scans[0]["label"] == "scan x 3"
    assert nodes["layers.linear"]["kind"] == "module"
    chain = []
    node = nodes["layers.linear"]
    while node["parent"]:
        chain.append(node["parent"])
        node = nodes[node["parent"]]
    assert scans[0]["id"] in chain
    assert nodes["layers.linear.weight"]["outputs"][0]["shape"] == [3, 8, 8]
    assert len([n for n in nodes.values() if n["op"] == "dot_general"]) == 1


def test_linen_and_equinox_paths(models):
    _, linen = capture(models.linen_mlp(), (2, 8), checkpoints=("Dense_1",))
    assert {"Dense_0", "Dense_1", "Dense_2"} <= set(modules(linen))
    assert linen["Dense_0.kernel"]["parent"] == "Dense_0" and linen["Dense_2.bias"]["outputs"][0]["shape"] == [3]
    _, bound = capture(models.linen_bound(), (2, 8))
    assert modules(bound)["Dense_0"]["params"]["parameters"] == 8 * 8 + 8
    assert bound["Dense_1.kernel"]["op"] == "Parameter"
    eqx_captured, eqx_nodes = capture(models.eqx_mlp(), (2, 8), checkpoints=("mlp.layers[1]",))
    found = modules(eqx_nodes)
    assert {"norm", "mlp", "mlp.layers[0]", "mlp.layers[1]", "mlp.layers[2]"} <= set(found)
    assert found["mlp.layers[1]"]["parent"] == "mlp"
    assert eqx_nodes["mlp.layers[0].weight"]["outputs"][0]["shape"] == [16, 8]
    assert not [i for i in eqx_nodes if "eqx" in i or "vmap" in i]
    assert eqx_captured["activations"]["mlp.layers[1]"].shape == (2, 16)


def test_nnx_model_passed_to_nnx_jit_from_a_closure(models):
    captured, nodes = capture(models.nnx_jit_argument(), (3, 8), checkpoints=("layers.1",))
    assert {"layers.0.linear", "layers.1.out", "head"} <= set(modules(nodes))
    assert nodes["layers.1.out.kernel"]["op"] == "Parameter"
    assert captured["activations"]["layers.1"].shape == (3, 8)


def test_library_attention_layers(models):
    _, nnx_nodes = capture(models.nnx_attention(), (1, 5, 8))
    assert {"attention", "attention.query", "attention.key", "attention.value", "attention.out"} \
        == set(modules(nnx_nodes))  # jnp.einsum's own scopes are no boxes
    _, eqx_nodes = capture(models.eqx_attention(), (5, 8), checkpoints=())
    found = set(modules(eqx_nodes))
    assert {"attention", "attention.query_proj", "attention.key_proj", "attention.output_proj"} <= found
    assert all("BoundMethod" not in i and "__self__" not in i for i in eqx_nodes)
    assert eqx_nodes["attention.query_proj.weight"]["parent"] == "attention.query_proj"


def test_linen_scan_body_stays_in_its_scan_box(models):
    _, nodes = capture(models.linen_scan(), (2, 8))
    scan = next(n for n in nodes.values() if n.get("group") == "scan")
    assert (scan["id"], scan["params"]) == ("blocks.scan", {"length": 3})
    assert nodes["blocks.Dense_0"]["parent"] == "blocks.scan"
    assert nodes["blocks.Dense_0.kernel"]["outputs"][0]["shape"] == [3, 8, 8]


def test_unknown_checkpoint_names_the_ones_available(models):
    with pytest.raises(ValueError, match=r"no_such.*layers\.0\.linear"):
        capture(models.nnx_mlp(), (3, 8), checkpoints=("no_such",))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    srcdir = copy_root("test-graph-jaxlibs", tmp_path_factory)
    return sphinx_build(srcdir, srcdir.parent / "html", fresh=True)


@pytest.mark.sphinx
def test_pages_build_clean_with_library_names_and_activations(built):
    assert built.warnings == [], built.raw_warnings
    artifacts = artifacts_by_function(built.srcdir)
    expected = {"nnx_mlp": ("layers.1.linear", "layers.0"), "nnx_cnn": ("conv1", "conv1"),
                "linen_mlp": ("Dense_1", "Dense_1"), "eqx_mlp": ("mlp.layers[1]", "mlp.layers[1]")}
    for function, (module, checkpoint) in expected.items():
        data = artifacts[function]["data"]
        ids = {n["id"]: n for n in data["layers"]}
        assert ids[module]["kind"] == "module", function
        assert any(n["op"] == "Parameter" and n["parent"] for n in data["layers"]), function
        assert data["activations"][checkpoint]["values"], function
    assert [c["passed"] for c in artifacts["nnx_mlp"]["checks"]] == [True]
    html = built.page("nnx-mlp")
    assert "layers.0.linear" in html and "gelu" in html


def test_a_module_method_called_by_the_module_is_a_function_group(models):
    _, nodes = capture(models.nnx_attention_method(), (3, 8))
    assert (nodes["scores"]["group"], nodes["scores"]["parent"]) == ("function", None)
    assert nodes["scores.softmax"]["parent"] == "scores" and nodes["query"]["kind"] == "module"


@pytest.mark.sphinx
def test_downloaded_run_py_of_a_jax_graph_checks_its_output(built, tmp_path):
    """The standalone script recomputes what it can without the package (the output); the JAX
    checkpoints are `tensorviz verify`'s job, so they are not expected there."""
    import shutil
    import subprocess
    import sys

    folders = [p.parent for p in (built.outdir / "_tensorviz").glob("*/run.py")]
    folder = next(f for f in folders if json.loads((f / "artifact.json").read_text("utf-8"))["request"]["function"]
                  == "eqx_mlp")
    copy = tmp_path / "run"
    shutil.copytree(folder, copy)
    done = subprocess.run([sys.executable, "run.py", "--check"], cwd=copy, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert '"output"' in done.stdout and "activations[" not in done.stdout


def test_two_models_in_one_function_are_named_after_their_variables(models):
    encoder, decoder = models.nnx_mlp(seed=0), models.nnx_mlp(seed=1)
    _, nodes = capture(lambda x: decoder(encoder(x) @ jnp.ones((3, 8))), (3, 8))
    assert {"encoder.layers.0.linear", "decoder.layers.1.out", "encoder.head"} <= set(modules(nodes))
    assert nodes["decoder.head.kernel"]["parent"] == "decoder.head"


def test_conv_checkpoints_are_channel_maps_whichever_axis_the_library_uses():
    """Flax keeps channels last, Equinox first: both become channel maps, read off the bias length."""
    import equinox as eqx
    import jax
    from flax import nnx

    from sphinx_tensorviz.features.graph.activation_records import activation_record
    from sphinx_tensorviz.features.graph.capture.jax_graph import capture_jax_graph
    from sphinx_tensorviz.features.graph.capture.layout_hints import layout_hints

    class FlaxConv(nnx.Module):
        def __init__(self, out, rngs):
            self.conv = nnx.Conv(2, out, kernel_size=(3, 3), rngs=rngs)

        def __call__(self, x):
            return self.conv(x)

    class EqxConv(eqx.Module):
        conv: eqx.nn.Conv2d

        def __init__(self, out, key):
            self.conv = eqx.nn.Conv2d(2, out, kernel_size=3, padding=1, key=key)

        def __call__(self, x):
            return jax.vmap(self.conv)(x)

    # 5 channels on 6 x 6 maps: the axis sizes tell; 6 channels on 6 x 6: the kernel's layout tells
    for out in (5, 6):
        cases = {"channels-last": (FlaxConv(out, nnx.Rngs(0)), (1, 6, 6, 2)),
                 "channels": (EqxConv(out, jax.random.PRNGKey(0)), (1, 2, 6, 6))}
        for expected, (model, shape) in cases.items():
            captured = capture_jax_graph(model, (jax.numpy.ones(shape),), __file__, checkpoints=["conv"])
            hints = layout_hints(captured["graph"], captured["activations"])
            assert hints == {"conv": expected}, (out, expected)
            record = activation_record(captured["activations"]["conv"], hint=hints["conv"])
            assert record["layout"] == "channels" and record["count"] == out and record["mapShape"] == [6, 6]
    # a 4-axis activation with no module to read it from stays a located problem, never a guess
    assert activation_record(jax.numpy.ones((1, 6, 6, 5)))["problem"]


def test_library_ops_point_at_the_authors_call_site():
    """Equinox's LayerNorm computes its variance in jitted jnp code and nnx.relu is a custom_jvp:
    their ops were traced away from the model file; each gets the line of the author's call."""
    import equinox as eqx
    from flax import nnx

    class EqxNorm(eqx.Module):
        norm: eqx.nn.LayerNorm

        def __init__(self):
            self.norm = eqx.nn.LayerNorm(8)

        def __call__(self, x):
            return jax.vmap(self.norm)(x)  # the norm's call site

    class NnxRelu(nnx.Module):
        def __init__(self, rngs):
            self.lin = nnx.Linear(8, 8, rngs=rngs)

        def __call__(self, x):
            return nnx.relu(self.lin(x))  # relu's call site

    lines = Path(__file__).read_text("utf-8").splitlines()
    for model, expected in ((EqxNorm(), {"norm": "the norm's call site"}),
                            (NnxRelu(nnx.Rngs(0)), {"relu_0": "relu's call site", "lin": "relu's call site"})):
        captured = capture_jax_graph(model, (jnp.ones((3, 8)),), __file__)
        ops = [n for n in captured["graph"]["layers"] if n["kind"] == "layer" and n["op"] not in ("Parameter", "Buffer")]
        assert ops and not [n["id"] for n in ops if "source" not in n], type(model).__name__
        for prefix, text in expected.items():
            mine = [n for n in ops if n["id"] == prefix or n["id"].startswith(prefix + ".")]
            assert mine, prefix
            for node in mine:
                assert text in lines[node["source"]["line"] - 1], (node["id"], node["source"])


def _scan_body_ops(fn, *args):
    """Primitive equations of the (single) scan's body, nested calls counted through: what its box holds."""
    from sphinx_tensorviz.features.graph.capture.jax_graph.jaxpr import count_ops

    def scans(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "scan":
                yield eqn
            for value in eqn.params.values():
                inner = getattr(value, "jaxpr", value)
                if hasattr(inner, "eqns"):
                    yield from scans(inner)

    found = list(scans(jax.make_jaxpr(fn)(*args).jaxpr))
    assert len(found) == 1
    return count_ops(found[0].params["jaxpr"])


def test_linen_rnn_draws_its_cell_inside_the_scan_box():
    """nn.RNN initialises the carry with the cell (outside the loop), then scans the cell: the cell's
    box, with every op of the loop body, belongs inside ``scan x 5``; the carry's set-up stays outside."""
    import flax.linen as linen

    class Recurrent(linen.Module):
        @linen.compact
        def __call__(self, x):
            return linen.RNN(linen.OptimizedLSTMCell(6))(x)

    model = Recurrent()
    x = jax.random.normal(jax.random.PRNGKey(0), (2, 5, 3))
    params = model.init(jax.random.PRNGKey(1), x)

    def fn(x):
        return model.apply(params, x)

    captured = capture_jax_graph(fn, (x,), __file__, checkpoints=("OptimizedLSTMCell_0",))
    nodes = {n["id"]: n for n in captured["graph"]["layers"]}
    scan = next(n for n in nodes.values() if n.get("group") == "scan")
    assert scan["params"] == {"length": 5} and nodes["OptimizedLSTMCell_0"]["parent"] == scan["id"]

    def inside(node):
        while node["parent"]:
            if node["parent"] == scan["id"]:
                return True
            node = nodes[node["parent"]]
        return False

    ops = [n for n in nodes.values() if n["kind"] == "layer" and n["op"] not in ("Parameter", "Buffer")]
    in_scan = [n for n in ops if inside(n)]
    assert len(in_scan) == _scan_body_ops(fn, x) > 10
    assert {"logistic", "tanh", "dot_general"} <= {n["op"] for n in in_scan}
    assert [n for n in ops if not inside(n) and n["op"] == "random_split"]  # the carry's set-up, once
    assert captured["activations"]["OptimizedLSTMCell_0"].shape[-1] == 6


def test_a_checkpoint_named_by_its_op_alone_lists_the_ops_of_that_name():
    """``:checkpoints: relu`` on an Equinox MLP listed only the modules (``layers[0]``...), though op
    ids can be checkpointed too: the closest ids of any node come first, and can be written as is."""
    import equinox as eqx

    mlp = eqx.nn.MLP(4, 3, 8, 2, key=jax.random.PRNGKey(0))
    x = (jnp.ones((4,)),)
    with pytest.raises(ValueError) as caught:
        capture_jax_graph(mlp, x, __file__, checkpoints=("relu",))
    message = str(caught.value)
    assert message.startswith("checkpoints produced no value: relu; the closest nodes: "), message
    suggested = message.partition("closest nodes: ")[2].partition(";")[0].split(", ")
    assert set(suggested[:2]) == {"relu_0", "relu_1"}, message
    captured = capture_jax_graph(mlp, x, __file__, checkpoints=(suggested[0],))
    assert list(captured["activations"]) == [suggested[0]]
