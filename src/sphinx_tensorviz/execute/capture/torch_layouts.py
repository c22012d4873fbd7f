"""What a PyTorch checkpoint's tensor is, read off the layers that made it (for ``tv-activations``).

The reading is the one both frameworks share (:mod:`..layout_hints`): conv-like layers of any
rank make channel data, a softmax makes attention weights; PyTorch keeps channels first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..layout_hints import hint_for


def layout_hint(nodes: Sequence[dict[str, Any]], node_id: str,
                edges: Sequence[dict[str, Any]] = ()) -> str | None:
    """The layout hint of ``node_id``'s output, read off the recorded nodes and their connections
    (a ReLU after a convolution is that convolution's output)."""
    return hint_for({"layers": list(nodes), "connections": list(edges)}, node_id, channels_first=True)
