"""torchvision models, where torchvision imports (its wheel here is built for CUDA torch and does
not import with the CPU build, so this file is skipped there; the course does not depend on it).

A ResNet-18 with random weights is traced as torchvision ships it: nodes link into
``torchvision/models/resnet.py`` with the excerpt, version and license in the graph, and a
residual stage's output is recognised as channel maps.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

from sphinx_tensorviz.features.graph.activation_records import activation_record  # noqa: E402
from sphinx_tensorviz.features.graph.capture.layout_hints import layout_hints  # noqa: E402
from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402


def test_resnet_traces_with_library_sources_and_channel_maps(tmp_path) -> None:
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=3).eval()
    entry = tmp_path / "factory.py"
    entry.write_text("# the page's factory file\n", "utf-8")
    captured = capture_torch_graph(model, (torch.randn(1, 3, 32, 32),), str(entry), checkpoints=["layer1"],
                                   srcdir=str(tmp_path))
    graph = captured["graph"]
    nodes = {n["id"]: n for n in graph["layers"]}
    assert nodes["layer1.0.conv1"]["source"]["file"] == "torchvision/models/resnet.py"
    info = graph["sources"]["torchvision/models/resnet.py"]
    assert (info["kind"], info["version"]) == ("library", torchvision.__version__)
    assert any("def forward(" in line for e in info["excerpts"] for line in e["lines"])
    hint = layout_hints(graph, captured["activations"], channels_first=True)["layer1"]
    record = activation_record(captured["activations"]["layer1"], -1, None, hint=hint)
    assert (record["layout"], record["count"], record["mapShape"]) == ("channels", 64, [8, 8])
    assert [o["id"] for o in graph["outputs"]] == ["output"]
