"""What a checkpoint's tensor is, read off the graph that produced it (PyTorch and JAX alike).

A shape alone does not say what a tensor is: ``[1, 32, 8]`` may be 32 tokens of 8 features or
32 channels along 8 positions, ``[4, 6, 6]`` a batch of 4 or 4 heads. The captured graph says
what *made* it: a convolution, pooling or channel norm of any rank makes channel data (its rank
and, where it is known, its channel count tell which axis holds the channels); a softmax makes
probabilities (attention maps when its last two axes are query x key). Ops that keep their
input's layout (activations, dropout, elementwise arithmetic, a squeeze of unit axes) are walked
back through, so a ReLU after a 1-D convolution is read as that convolution's output; so is a
flatten or reshape that puts a channel map's positions on one axis (read as channels x length).
A transpose of a 3-axis tensor's last two axes flips what its input was read as (tokens x
features become features along positions, as Segformer feeds its tokens to a convolution).

Token features need a producer too: a linear (or matrix product), embedding, attention, MLP or
norm over the last axis makes ``tokens``, and so does an op that keeps such an output's layout.
A 3-axis tensor whose producer says nothing (a raw ``[B, C, L]`` input, an op these rules cannot
read) could be tokens x features or channels x length, so it gets no hint.

A hint names the layout exactly, or there is none and :mod:`.activations` falls back to what the
shape alone settles, or asks for ``:layout:`` with a located warning: never a guessed label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["AMBIGUOUS_HEADS", "HINTS", "layout_hints"]

#: hints a checkpoint can get; ``AMBIGUOUS_HEADS`` is a softmax whose first axis may be batch or heads
AMBIGUOUS_HEADS = "batch-or-heads"
HINTS = ("tokens", "channels", "channels-last", "channels-length", "length-channels", "heads", AMBIGUOUS_HEADS)

#: ops (last dotted part, lower case) that make channel data: conv, pool, channel norms, resampling
_CHANNEL_OP = re.compile(r"^(?!convert)(conv|(adaptive_?)?(max|avg|lp)_?pool|fractional_?max_?pool|batch_?norm|"
                         r"instance_?norm|group_?norm|reduce_window|upsample|pixel_?(un)?shuffle)")
#: ops and modules (by their name's end: ``LlamaRMSNorm``, ``BertSelfAttention``) that make token features
_TOKEN_OP = re.compile(r"(linear|embedding|embed|layer_?norm|rms_?norm|attention|mlp|dense|dot_general|matmul|"
                       r"bmm|einsum|scaled_dot_product_attention)$")
#: ops whose output keeps the layout of their input
_KEEPS_LAYOUT = re.compile(r"^(add|sub|mul|div|neg|abs|relu\d*|leaky_?relu|gelu|silu|swish|sigmoid|logistic|tanh|"
                           r"elu|selu|celu|mish|softplus|hard\w*|dropout\w*|identity|clamp\w*|clip|max|min|exp|"
                           r"square|sqrt|rsqrt|pow|integer_pow|convert_element_type|copy|contiguous|to|float|"
                           r"stop_gradient|squeeze|unsqueeze|reshape|view|expand_dims|broadcast_in_dim)$")
#: ops that cut or pad axes but keep what each axis is (Mamba's ``conv1d(x)[..., :length]``)
_CUTS = re.compile(r"^(getitem|slice|narrow|dynamic_slice|pad|constant_pad_nd)$")
#: ops that may merge a channel map's two spatial axes into one (``flatten(2)``, ``view(B, C, -1)``)
_MERGES = re.compile(r"^(flatten|view|reshape)$")
#: ops that may swap a 3-axis tensor's last two axes (tokens x features -> features x tokens)
_SWAPS = re.compile(r"^(transpose|permute|mt|swapaxes|swapdims|movedim|moveaxis)$")
#: node params that give a channel layer's output channels (PyTorch modules)
_CHANNEL_PARAMS = ("out_channels", "num_features", "num_channels")
_DEPTH = 16


def layout_hints(graph: Mapping[str, Any], activations: Mapping[str, Any], *, heads: int | None = None,
                 channels_first: bool = False) -> dict[str, str]:
    """A hint (one of :data:`HINTS`) for each checkpoint whose producer tells its layout.

    ``heads`` is the model's head count if known; ``channels_first`` says the framework keeps
    channels before the spatial axes whatever the channel count (PyTorch), where JAX code may
    keep them last (Flax) and only the producer's channel count or dimension numbers tell.
    """
    reader = _Graph(graph, heads, channels_first)
    hints: dict[str, str] = {}
    for name, value in activations.items():
        hint = reader.hint(name, [int(n) for n in getattr(value, "shape", ())])
        if hint is not None:
            hints[name] = hint
    return hints


class _Graph:
    """The captured graph, indexed for walking back from a checkpoint to its producer."""

    def __init__(self, graph: Mapping[str, Any], heads: int | None, channels_first: bool) -> None:
        self.nodes: list[dict[str, Any]] = list(graph.get("layers") or [])
        self.by_id = {node["id"]: node for node in self.nodes}
        self.sources: dict[str, list[str]] = {}
        for edge in graph.get("connections") or []:
            self.sources.setdefault(edge["target"], []).append(edge["source"])
        self.heads = heads
        self.channels_first = channels_first
        self.batch_sizes = {shape[0] for node in self.nodes if node["kind"] == "input"
                            for shape in [_shape(node)] if len(shape) >= 2}
        self.visited: set[str] = set()  # ops walked back through for the current checkpoint
        self.merged = False  # the walk went through a merge of a channel map's spatial axes
        self.swaps: list[dict[str, Any]] = []  # swaps of the last two axes the walk stopped at
        self.nesting = 0  # hints asked for the tensors those swaps read
        self.norm_parts: set[str] = set()  # signs of a hand-written last-axis norm the walk passed

    def hint(self, name: str, shape: list[int]) -> str | None:
        node = self.by_id.get(name)
        if node is None or not shape:
            return None
        self.visited, self.merged, self.swaps, self.norm_parts = set(), False, [], set()
        producer = self._producer(node, shape)
        if producer is None:
            if self.norm_parts == {"reduced", "scaled"} and len(shape) in (2, 3):
                return "tokens"  # x / sqrt(mean(x**2, -1)) * gain: an RMSNorm written by hand
            return self._swapped(shape)
        if _is_softmax_op(producer) or self._is_softmax_pattern(producer):  # (a norm over the last axis)
            return None if self.merged else self._heads(shape) or ("tokens" if len(shape) in (2, 3) else None)
        if _is_token_op(producer):
            return None if self.merged or len(shape) not in (2, 3) else "tokens"
        return self._channels(producer, shape, node)

    # -- finding the producer ----------------------------------------------------------------
    def _producer(self, node: dict[str, Any], shape: list[int]) -> dict[str, Any] | None:
        """The op (or module) that made the checkpoint's value, after layout-keeping ops."""
        if node["kind"] == "module":
            if _is_softmax_op(node) or _is_channel_op(node) or _is_token_op(node):
                return node
            members = [n for n in self.nodes if n["kind"] == "layer" and n["op"] not in ("Parameter", "Buffer")
                       and _same(_shape(n), shape) and self._inside(n, node["id"])]
            if not members:
                return None
            node = members[-1]
        return self._walk_back(node, shape, 0)

    def _inside(self, node: dict[str, Any], container: str) -> bool:
        """Whether ``container`` holds ``node``, by the graph's parent links (not its id's prefix)."""
        parent = node.get("parent")
        for _ in range(len(self.by_id)):
            if parent is None:
                return False
            if parent == container:
                return True
            parent = self.by_id.get(parent, {}).get("parent")
        return False

    def _walk_back(self, node: dict[str, Any], shape: list[int], depth: int) -> dict[str, Any] | None:
        if _is_softmax_op(node) or self._is_softmax_pattern(node) or _is_channel_op(node) or _is_token_op(node):
            return node
        if node["id"] in self.visited:  # residual streams join the same producers again
            return None
        self.visited.add(node["id"])
        cuts = bool(_CUTS.match(_op_name(node)))
        merges = bool(_MERGES.match(_op_name(node)))
        if depth >= _DEPTH or not (cuts or merges or _KEEPS_LAYOUT.match(_op_name(node))):
            if _SWAPS.match(_op_name(node)) and len(_shape(node)) == 3:
                self.swaps.append(node)
            return None
        self._note_norm(node, shape)
        for source in self.sources.get(node["id"], []):
            upstream = self.by_id.get(source)
            if upstream is None or upstream["kind"] != "layer" or upstream["op"] in ("Parameter", "Buffer"):
                continue
            if _same(_shape(upstream), shape) or (cuts and len(_shape(upstream)) == len(shape)):
                found = self._walk_back(upstream, _shape(upstream), depth + 1)
                if found is not None:
                    return found
            elif merges and not self.merged and _merges_spatial_axes(_shape(upstream), shape):
                self.merged = True  # channel maps read as channels x length from here on
                found = self._walk_back(upstream, _shape(upstream), depth + 1)
                if found is not None:
                    return found
                self.merged = False
        return None

    def _note_norm(self, node: dict[str, Any], shape: list[int]) -> None:
        """Note what makes an elementwise chain a norm over the last axis: a source reduced over
        that axis (``mean(-1, keepdim=True)``, ``[..., 1]``) and a parameter of one weight per entry
        of it (the gain). Both together are a layer or RMS norm written by hand, as lessons do."""
        if len(shape) < 2 or shape[-1] == 1:
            return
        for source in self.sources.get(node["id"], []):
            before = _shape(self.by_id.get(source, {}))
            if self.by_id.get(source, {}).get("op") in ("Parameter", "Buffer"):
                if [n for n in before if n != 1] == [shape[-1]] and (not before or before[-1] == shape[-1]):
                    self.norm_parts.add("scaled")
            elif len(before) == len(shape) and before[:-1] == shape[:-1] and before[-1] == 1:
                self.norm_parts.add("reduced")

    def _swapped(self, shape: list[int]) -> str | None:
        """The hint of a 3-axis tensor whose last two axes a transpose swapped (Segformer's
        ``tokens.transpose(1, 2)`` before a convolution): tokens x features, or a length x channels
        tensor, become channels x length; channels x length become tokens again. A swap of what
        nothing can read (a raw input's axes) is unread too."""
        swaps = [n for n in self.swaps if _shape(n) == shape]
        if len(swaps) != 1 or self.nesting >= _DEPTH:
            return None
        swap = swaps[0]
        for source in self.sources.get(swap["id"], []):
            upstream = self.by_id.get(source, {})
            before = _shape(upstream)
            if upstream.get("op") in ("Parameter", "Buffer") or not _swaps_last_two(swap, before, shape):
                continue
            self.nesting += 1
            try:
                inner = self.hint(source, before)
            finally:
                self.nesting -= 1
            return {"tokens": "channels-length", "length-channels": "channels-length",
                    "channels-length": "tokens"}.get(inner or "")
        return None

    def _is_softmax_pattern(self, node: dict[str, Any]) -> bool:
        """JAX inlines ``jax.nn.softmax`` under vmap: ``div(exp(x), broadcast(reduce_sum(exp(x))))``."""
        if _op_name(node) != "div":
            return False
        sources = self.sources.get(node["id"], [])
        exps = {s for s in sources if _op_name(self.by_id.get(s, {})) == "exp"}
        for source in sources:
            seen, todo = 0, [source]
            while todo and seen < 4:
                current = self.by_id.get(todo.pop(), {})
                seen += 1
                if _op_name(current) == "reduce_sum":
                    return bool(exps & set(self.sources.get(current["id"], [])))
                if _op_name(current) in ("broadcast_in_dim", "reshape", "expand_dims", "stop_gradient"):
                    todo.extend(self.sources.get(current["id"], []))
        return False

    # -- what the producer makes ---------------------------------------------------------------
    def _heads(self, shape: list[int]) -> str | None:
        """A softmax over ``[B, H, Tq, Tk]`` is per-head attention; ``[X, T, T]`` is when X is the
        model's head count or cannot be the batch (no input starts with X). Unit axes between the
        batch and the heads (Flax NNX's key-value groups, ``[B, 1, H, T, T]``) change nothing."""
        if len(shape) >= 4 and all(n == 1 for n in shape[1:-3]):
            return "heads"
        if len(shape) == 3 and shape[1] == shape[2]:
            if self.heads == shape[0] or shape[0] not in self.batch_sizes:
                return "heads"
            return AMBIGUOUS_HEADS
        return None  # a softmax over logits ([B, T, vocab]) is a token strip

    def _channels(self, producer: dict[str, Any], shape: list[int], checkpoint: dict[str, Any]) -> str | None:
        """Channel maps or channels x length, with the channel axis first or last."""
        rank = _rank(producer)
        if self.merged:  # a 2-D map's positions in one axis (a ViT's patches before their transpose)
            if rank not in (2, None):
                return None
            rank = 1
        # a norm or pool that does not say its rank: batched (channels and spatial axes after the
        # batch), else unbatched (Equinox's GroupNorm of [C, H, W]), whichever its channels fit
        ranks = [rank] if rank is not None else [len(shape) - 2, len(shape) - 1]
        for rank in ranks:
            if rank not in (1, 2) or len(shape) not in (rank + 1, rank + 2):
                continue
            first, last = len(shape) - rank - 1, len(shape) - 1
            side = self._channel_side(producer, shape, first, last, checkpoint)
            if side is not None:
                return {(2, "first"): "channels", (2, "last"): "channels-last",
                        (1, "first"): "channels-length", (1, "last"): "length-channels"}[(rank, side)]
        return None

    def _channel_side(self, producer: dict[str, Any], shape: list[int], first: int, last: int,
                      checkpoint: dict[str, Any]) -> str | None:
        spec = _out_spec(producer)
        if spec is not None and _shape(producer) == shape:  # lax's dimension numbers say exactly
            return "first" if spec[1] == first else "last" if spec[1] == last else None
        counts = self._channel_counts(producer) | self._channel_counts(checkpoint) or self._fed_counts(producer)
        at_first, at_last = shape[first] in counts, shape[last] in counts
        if at_first != at_last:
            return "first" if at_first else "last"
        if self.channels_first:
            return "first"
        if at_first:  # C x C: the kernel's own layout (O, I, k... or k..., I, O) decides
            return self._kernel_side(producer, counts) or self._kernel_side(checkpoint, counts)
        return None

    def _channel_counts(self, node: dict[str, Any]) -> set[int]:
        """Output channels of a layer or module: its parameters, a conv's output, a bias length."""
        params = node.get("params") or {}
        counts = {int(params[key]) for key in _CHANNEL_PARAMS if isinstance(params.get(key), int)}
        spec, shape = _out_spec(node), _shape(node)
        if spec is not None and len(shape) == len(spec):
            counts.add(shape[spec[1]])
        for owned in self._parameters(node):
            out = _shape(owned)
            if out and all(n == 1 for n in out[1:]):  # a bias or scale: (C,) or (C, 1, 1)
                counts.add(out[0])
        return counts

    def _fed_counts(self, node: dict[str, Any], depth: int = 0) -> set[int]:
        """The channel count of the layer that fed ``node``: a pooling has no weights to count by
        (Equinox's ``MaxPool2d``, Flax's ``max_pool``), the convolution before it has."""
        members = [node] if node["kind"] == "layer" else [n for n in self.nodes if self._inside(n, node["id"])]
        inside = {member["id"] for member in members}
        saved = self.visited, self.merged
        try:
            for member in members:
                for source in self.sources.get(member["id"], []):
                    upstream = self.by_id.get(source)
                    if source in inside or upstream is None or upstream["op"] in ("Parameter", "Buffer"):
                        continue
                    self.visited, self.merged = set(), False
                    found = self._walk_back(upstream, _shape(upstream), 0)
                    if found is None or self.merged or _is_token_op(found):
                        continue
                    counts = self._channel_counts(found)
                    if not counts and depth < _DEPTH:
                        counts = self._fed_counts(found, depth + 1)
                    if counts:
                        return counts
        finally:
            self.visited, self.merged = saved
        return set()

    def _kernel_side(self, node: dict[str, Any], counts: set[int]) -> str | None:
        sides = set()
        for owned in self._parameters(node):
            kernel = _shape(owned)
            if len(kernel) >= 3:
                sides.add("first" if kernel[0] in counts and kernel[-1] not in counts else
                          "last" if kernel[-1] in counts and kernel[0] not in counts else "")
        return sides.pop() if len(sides) == 1 and "" not in sides else None

    def _parameters(self, node: dict[str, Any]) -> list[dict[str, Any]]:
        parent = node["id"] if node["kind"] == "module" else node.get("parent")
        if parent is None:
            return []
        return [n for n in self.nodes if n["op"] == "Parameter" and n.get("parent") == parent]


def _op_name(node: Mapping[str, Any]) -> str:
    """``torch.nn.functional.conv1d`` -> ``conv1d``, ``Tensor.__add__`` -> ``add``, ``ReLU`` -> ``relu``;
    a module's class when its op is the generic ``Module``. A layer given ``weight_norm`` or
    ``spectral_norm`` (``torch.nn.utils.parametrize``, as Wav2Vec2's positional convolution) has
    the class ``Parametrized<Layer>``: it computes what the layer does, so it is read as the layer."""
    op = str(node.get("op") or "")
    if op == "Module":
        op = str(node.get("class") or "")
    return op.rsplit(".", 1)[-1].removeprefix("Parametrized").strip("_").lower()


def _is_channel_op(node: Mapping[str, Any]) -> bool:
    """A conv, pool or channel norm; not transformers' ``Conv1D`` (GPT-2's linear layer, on tokens)."""
    return bool(_CHANNEL_OP.match(_op_name(node))) and not str(node.get("op") or "").endswith("Conv1D") \
        and str(node.get("class") or "") != "Conv1D"


def _is_token_op(node: Mapping[str, Any]) -> bool:
    """A linear, embedding, attention, MLP or last-axis norm: its output is tokens x features
    (transformers' ``Conv1D`` is GPT-2's linear layer, so it counts here too)."""
    return bool(_TOKEN_OP.search(_op_name(node))) or str(node.get("class") or node.get("op") or "").endswith("Conv1D")


def _is_softmax_op(node: Mapping[str, Any]) -> bool:
    return _op_name(node).endswith("softmax")


def _rank(node: Mapping[str, Any]) -> int | None:
    """Spatial rank from the op's name (``Conv1d``, ``max_pool2d``) or a conv's dimension numbers."""
    found = re.search(r"(\d)d$", _op_name(node))
    if found:
        return int(found.group(1))
    spec = _out_spec(node)
    return len(spec) - 2 if spec is not None else None


def _out_spec(node: Mapping[str, Any]) -> list[int] | None:
    """``conv_general_dilated``'s output dimension numbers: (batch axis, feature axis, spatial...)."""
    numbers = (node.get("params") or {}).get("dimension_numbers")
    if _op_name(node) == "conv_general_dilated" and isinstance(numbers, list) and len(numbers) == 3:
        return [int(n) for n in numbers[2]]
    return None


def _shape(node: Mapping[str, Any]) -> list[int]:
    outputs = node.get("outputs") or [{}]
    return [int(n) for n in outputs[0].get("shape") or []]


def _merges_spatial_axes(before: list[int], after: list[int]) -> bool:
    """``[B, C, H, W] -> [B, C, H*W]`` or ``[B, H, W, C] -> [B, H*W, C]``: the channel axis is kept."""
    if len(before) != 4 or len(after) != 3 or before[0] != after[0]:
        return False
    first = before[1] == after[1] and before[2] * before[3] == after[2]
    last = before[3] == after[2] and before[1] * before[2] == after[1]
    return first or last


def _swaps_last_two(node: Mapping[str, Any], before: list[int], after: list[int]) -> bool:
    """Whether ``node`` made ``[B, a, b]`` out of ``[B, b, a]``: by its parameters (``transpose(1, 2)``,
    ``permute(0, 2, 1)``, a JAX permutation) or, where those say nothing, by the shapes when a != b."""
    if len(before) != 3 or after != [before[0], before[2], before[1]]:
        return False
    params = node.get("params") or {}
    order = params.get("permutation") or params.get("dims")
    if isinstance(order, list):
        return [int(axis) % 3 for axis in order] == [0, 2, 1]
    if isinstance(params.get("dim0"), int) and isinstance(params.get("dim1"), int):
        return {params["dim0"] % 3, params["dim1"] % 3} == {1, 2}
    return _op_name(node) == "mt" or before[1] != before[2]


def _same(a: list[int], b: list[int]) -> bool:
    """The same layout: equal shapes once unit axes are dropped (vmap and squeeze add or take them)."""
    return [n for n in a if n != 1] == [n for n in b if n != 1]
