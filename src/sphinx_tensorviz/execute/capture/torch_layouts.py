"""What a PyTorch checkpoint's tensor is, read off the layers that made it (for ``tv-activations``).

A conv-like layer (or a module built from them) makes feature maps, drawn as channel maps; a
softmax makes attention weights, drawn as one map per head. Anything else is a token strip,
unless the author says otherwise with ``:layout:``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: layer class names (parts of) that produce spatial feature maps
SPATIAL = ("Conv", "Pool", "BatchNorm2d", "BatchNorm3d", "InstanceNorm", "Upsample", "PixelShuffle")


def layout_hint(nodes: Sequence[dict[str, Any]], node_id: str) -> str | None:
    """``channels`` for feature maps (conv-like layers, or modules built from them), ``heads``
    for a softmax's output (attention weights when 4-D), else None."""
    node = next((n for n in nodes if n["id"] == node_id), None)
    if node is None:
        return None
    if node["op"].lower().endswith("softmax"):
        return "heads"
    if node["kind"] == "module":
        prefix = node_id + "."
        ops = [n["op"] for n in nodes if n["id"].startswith(prefix) and n["kind"] == "layer"]
    else:
        ops = [node["op"]]
    return "channels" if any(part in op for op in ops for part in SPATIAL) else None
