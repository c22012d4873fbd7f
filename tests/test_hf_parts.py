"""The pure parts behind library-model tracing (issue 10), without a Sphinx build: output naming,
activation layouts, id resolution and group folding, each on real tensors or real graph data."""

from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

from sphinx_tensorviz.core.ids import canonical
from sphinx_tensorviz.execute.worker.results import BadResult
from sphinx_tensorviz.features.graph.activation_records import activation_record
from sphinx_tensorviz.features.graph.filter import fold_groups
from sphinx_tensorviz.features.graph.page import GraphOnPage

torch = pytest.importorskip("torch")

from sphinx_tensorviz.features.graph.capture.outputs import exposed_summary, name_outputs  # noqa: E402


class _Layer:
    def __init__(self, keys: torch.Tensor) -> None:
        self.keys = keys


class _Holder:
    """A library object that is no container: tensors behind attributes, like a KV cache."""

    def __init__(self, *tensors: torch.Tensor) -> None:
        self.layers = [_Layer(t) for t in tensors]
        self.count = len(tensors)
        self._private = torch.zeros(1)


def test_outputs_are_named_through_every_container() -> None:
    pair = namedtuple("Pair", "first second")
    a, b, c, d = (torch.full((n,), float(n)) for n in (1, 2, 3, 4))

    @dataclasses.dataclass
    class Out:
        logits: torch.Tensor
        extra: dict

    named = name_outputs(Out(a, {"pair": pair(b, None), "seq": [c, c], "shape": a.shape, "cache": _Holder(d)}))
    assert [(o.name, o.type_name) for o in named] == [
        ("logits", "Tensor"), ("extra.pair.first", "Tensor"), ("extra.seq.0", "Tensor"), ("extra.cache", "_Holder")]
    assert named[2].tensor is c  # the same tensor twice is one output
    assert exposed_summary(named[3]) == {"type": "_Holder", "layers.0.keys": "4"}
    opaque = name_outputs((a, object()))[1]
    assert opaque.exposed == [] and "opaque" in exposed_summary(opaque)["note"]
    assert [o.name for o in name_outputs(a)] == ["output"]


@pytest.mark.parametrize(("shape", "layout", "hint", "expected"), [
    ((1, 6, 16), None, "tokens", "tokens"),  # a linear, embedding or norm made it
    ((1, 6, 16), None, None, None),  # nothing says tokens x features or channels x length
    ((1, 6, 16), "tokens", None, "tokens"),  # the author's :layout: settles it
    ((6, 16), None, None, "tokens"),
    ((1, 16), None, None, "features"),
    ((16,), None, None, "features"),
    ((1, 8, 5, 5), None, "channels", "channels"),
    ((1, 4, 6, 6), None, "heads", "heads"),
    ((1, 6, 16), None, "heads", "tokens"),  # a 3-axis softmax (logits) is not attention maps
    ((1, 4, 6, 6), "heads x T x T", None, "heads"),
    ((1, 4, 6, 6), "channels", "heads", "channels"),  # the author's layout wins
])
def test_layouts(shape: tuple[int, ...], layout: str | None, hint: str | None, expected: str) -> None:
    record = activation_record(np.arange(np.prod(shape), dtype=np.float32).reshape(shape), -1, None,
                               layout=layout, hint=hint)
    assert record["layout"] == expected and record["dtype"] == "float32"


def test_maps_are_pooled_and_summarised() -> None:
    array = np.random.default_rng(0).standard_normal((1, 20, 48, 48))
    record = activation_record(array, -1, None, hint="channels")
    assert (record["count"], record["mapShape"], record["pooledTo"]) == (20, [48, 48], [24, 24])
    assert len(record["maps"]) == 16 and len(record["values"]) == 20
    expected = array[0, 3].reshape(24, 2, 24, 2).mean(axis=(1, 3))
    assert np.allclose(record["maps"][3], expected)
    assert np.allclose(record["mean"], array[0].mean(axis=0).reshape(24, 2, 24, 2).mean(axis=(1, 3)))
    assert record["values"][5] == pytest.approx(array[0, 5].mean())


def test_ambiguous_and_impossible_layouts() -> None:
    ambiguous = activation_record(np.zeros((1, 4, 6, 6)), -1, None)
    assert ambiguous["layout"] is None and ":layout:" in ambiguous["problem"] and "values" not in ambiguous
    assert activation_record(np.zeros((1, 2, 3, 4, 5)), -1, None)["layout"] is None
    # a hint now carries the producer's rank: a 1-D producer's [batch, channels, length] is drawn as
    # such (tests/test_layouts.py); a shape that fits no reading of a conv-like producer is a problem
    conv3d = activation_record(np.zeros((1, 2, 8, 4, 4)), -1, None, hint="channels")
    assert conv3d["layout"] is None and "does not read as channels x length" in conv3d["problem"]
    with pytest.raises(BadResult, match="needs at least 3 axes"):
        activation_record(np.zeros((6, 16)), -1, None, layout="channels")
    with pytest.raises(BadResult, match="outside the 6 tokens"):
        activation_record(np.zeros((1, 6, 16)), 9, None, hint="tokens")
    with pytest.raises(ValueError, match="unknown layout"):
        activation_record(np.zeros((1, 6, 16)), -1, None, layout="pixels")


LAYERS = [
    {"id": "input", "label": "input", "kind": "input", "parent": None},
    {"id": "attn", "label": "attn", "kind": "module", "parent": None},
    {"id": "attn.rope()", "label": "rope()", "kind": "module", "parent": "attn", "group": "function",
     "function": "rope"},
    {"id": "attn.half()", "label": "half()", "kind": "module", "parent": "attn.rope()", "group": "function",
     "function": "half"},
    {"id": "attn.neg_0", "label": "neg_0", "kind": "layer", "parent": "attn.half()", "outputs": [{"shape": [2]}]},
    {"id": "attn.mul_0", "label": "mul_0", "kind": "layer", "parent": "attn.rope()", "outputs": [{"shape": [3]}]},
    {"id": "attn.mul_1", "label": "mul_1", "kind": "layer", "parent": "attn", "outputs": [{"shape": [3]}]},
    {"id": "block.mul_0", "label": "mul_0", "kind": "layer", "parent": None},
    {"id": "output", "label": "output", "kind": "output", "parent": None},
]
EDGES = [("input", "attn.neg_0"), ("attn.neg_0", "attn.mul_0"), ("input", "attn.mul_0"),
         ("attn.mul_0", "attn.mul_1"), ("attn.mul_1", "output")]
GRAPH = {"layers": LAYERS, "connections": [{"id": f"edge-{i}", "source": s, "target": t}
                                           for i, (s, t) in enumerate(EDGES, start=1)]}


def test_targets_resolve_by_id_old_id_or_drawn_label() -> None:
    assert canonical("mul@attn#1") == "attn.mul_1" and canonical("add@root#0") == "add_0"
    assert canonical("shared#2") == "shared:2" and canonical("attn.rope()") == "attn.rope()"
    tour = GraphOnPage("tv-f", {"data": GRAPH}, depth=4, expand=())
    assert tour.resolve("attn.mul_1") == "attn.mul_1"
    assert tour.resolve("mul@attn#1") == "attn.mul_1"  # an id recorded before this version
    assert tour.resolve("mul_1") == "attn.mul_1"  # a label only one node carries
    assert tour.resolve("rope()") == "attn.rope()"
    assert tour.resolve("mul_0") is None and tour.drawn_labels["mul_0"] == ["attn.mul_0", "block.mul_0"]
    assert tour.resolve("nothing") is None


def test_collapse_folds_nested_groups_into_the_outer_one() -> None:
    folded = fold_groups(GRAPH, collapse=["r*"])
    ids = [n["id"] for n in folded["layers"]]
    assert "attn.half()" not in ids and "attn.neg_0" not in ids and "attn.mul_0" not in ids
    rope = next(n for n in folded["layers"] if n["id"] == "attn.rope()")
    assert (rope["kind"], rope["collapsed"], rope["params"]) == ("layer", True, {"ops": 2})
    assert rope["outputs"] == [{"shape": [3]}]
    edges = [(e["source"], e["target"]) for e in folded["connections"]]
    assert edges == [("input", "attn.rope()"), ("attn.rope()", "attn.mul_1"), ("attn.mul_1", "output")]
    assert GRAPH["layers"] is LAYERS and len(LAYERS) == 9, "the input graph is not changed"


def test_hide_bridges_edges_and_unknown_patterns_fail() -> None:
    hidden = fold_groups(GRAPH, hide=["half"])
    assert [(e["source"], e["target"]) for e in hidden["connections"]][:2] == [
        ("input", "attn.mul_0"), ("attn.mul_0", "attn.mul_1")]
    assert {"attn.half()", "attn.neg_0"}.isdisjoint(n["id"] for n in hidden["layers"])
    with pytest.raises(ValueError, match="matches no function group; the groups are half, rope"):
        fold_groups(GRAPH, collapse=["softmax"])
    assert fold_groups(GRAPH) is GRAPH
