"""What a checkpoint's tensor is, read off the real model that made it (issue 24, points 12 and 15).

Real PyTorch, JAX, Flax NNX and Equinox models with tiny configs are traced; the layout of each
checkpoint comes from its producer in the captured graph (a 1-D conv, a norm, a pool, a ReLU after
them, a softmax), and where the producer cannot settle it the record is a problem, never a guess.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
eqx = pytest.importorskip("equinox")
nnx = pytest.importorskip("flax.nnx")
jnp = jax.numpy
nn = torch.nn
F = torch.nn.functional

from sphinx_tensorviz.features.graph.activation_records import activation_record  # noqa: E402
from sphinx_tensorviz.features.graph.capture.jax_graph import capture_jax_graph  # noqa: E402
from sphinx_tensorviz.features.graph.capture.layout_hints import layout_hints  # noqa: E402
from sphinx_tensorviz.features.graph.capture.torch_graph import capture_torch_graph  # noqa: E402

#: Flax and Equinox models are traced under jit in this process
pytestmark = pytest.mark.execution


def records(captured, channels_first, heads=None, layout=None):
    hints = layout_hints(captured["graph"], captured["activations"], heads=heads, channels_first=channels_first)
    return {name: activation_record(value, -1, heads, layout=layout, hint=hints.get(name))
            for name, value in captured["activations"].items()}


class Conv1dNet(nn.Module):
    """Conv1d + BatchNorm1d, a ReLU module after it, then F.conv1d (as Mamba calls it) and F.relu."""

    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Conv1d(3, 7, 3, padding=1), nn.BatchNorm1d(7))
        self.act = nn.ReLU()
        self.kernel = nn.Parameter(torch.randn(7, 1, 4))
        self.pool = nn.MaxPool1d(2)

    def forward(self, x):
        h = self.act(self.block(x))
        h = F.conv1d(h, self.kernel, padding=3, groups=7)[..., :20]
        return self.pool(F.relu(h))


def test_torch_channels_by_length_after_conv1d_norm_relu_and_functional_conv():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 20)  # 20 positions of 3 channels: tokens x features would read 20 x 7 "features"
    names = ["block", "block.1", "act", "conv1d_0", "relu_0", "pool"]
    captured = capture_torch_graph(Conv1dNet().eval(), (x,), __file__, checkpoints=names)
    found = records(captured, channels_first=True)
    for name in names:
        record = found[name]
        assert record["layout"] == "channels-length", (name, record.get("problem"))
        assert record["axes"] == ["channel", "position"] and record["count"] == 7, name
        value = captured["activations"][name].numpy()[0]
        assert record["length"] == value.shape[-1] and np.allclose(record["matrix"], value, atol=1e-6), name
        assert np.allclose(record["values"], value.mean(axis=1), atol=1e-6), name
    assert found["pool"]["length"] == 10


class Attention(nn.Module):
    """Multi-head attention weights [B, H, T, T], the same unbatched [H, T, T], and a one-head [B, T, T]."""

    def __init__(self, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qk = nn.Linear(8, 8 * 2)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        b, t, _ = x.shape
        q4 = q.view(b, t, self.heads, -1).transpose(1, 2)
        k4 = k.view(b, t, self.heads, -1).transpose(1, 2)
        batched = torch.softmax(q4 @ k4.transpose(-1, -2), dim=-1)  # [B, H, T, T]
        unbatched = F.softmax(q4[0] @ k4[0].transpose(-1, -2), dim=-1)  # [H, T, T]
        single = torch.softmax(q @ k.transpose(-1, -2), dim=-1)  # [B, T, T]: batch, not heads
        return batched.sum() + unbatched.sum() + single.sum()


def test_torch_attention_weights_are_heads_and_a_batch_of_maps_is_not_guessed():
    captured = capture_torch_graph(Attention(4).eval(), (torch.randn(2, 5, 8),), __file__,
                                   checkpoints=["softmax_0", "softmax_1", "softmax_2"])
    found = records(captured, channels_first=True)
    for name, count in (("softmax_0", 4), ("softmax_1", 4)):
        assert found[name]["layout"] == "heads" and found[name]["count"] == count, found[name].get("problem")
        assert found[name]["axes"] == ["head", "query token", "key token"]
        assert found[name]["metrics"]["min"] >= 0  # probabilities: drawn on a sequential scale
    # [2, 5, 5] with a batch of 2: it could be two heads; the page asks instead of labelling
    assert found["softmax_2"]["layout"] is None and "batch x T x T or heads" in found["softmax_2"]["problem"]
    # the model's own head count settles it when it matches
    assert records(captured, channels_first=True, heads=2)["softmax_2"]["layout"] == "heads"


def test_layout_channels_on_a_1d_conv_reads_channels_by_length():
    """The warning's advice (``:layout: channels``) on a conv1d's [1, 32, 8] used to draw '1 channels of 32x8'."""
    model = nn.Sequential(nn.Conv1d(4, 32, 3, padding=1))
    captured = capture_torch_graph(model.eval(), (torch.randn(1, 4, 8),), __file__, checkpoints=["0"])
    record = records(captured, channels_first=True, layout="channels")["0"]
    assert (record["layout"], record["count"], record["length"]) == ("channels-length", 32, 8)
    # without a producer to tell, a bare `channels` on three axes is a question, and the full spelling an answer
    bare = activation_record(np.zeros((1, 32, 8)), layout="channels")
    assert bare["layout"] is None and "channels x length" in bare["problem"]
    spelled = activation_record(np.zeros((1, 32, 8)), layout="channels x length")
    assert (spelled["layout"], spelled["count"], spelled["length"]) == ("channels-length", 32, 8)
    assert activation_record(np.zeros((1, 32, 8)), layout="channels x H x W")["count"] == 1


def test_equinox_attention_weights_keep_their_head_axis():
    """Equinox's MultiheadAttention vmaps a softmax JAX inlines: div(exp, sum(exp)) of shape [4, 6, 6]."""

    class Model(eqx.Module):
        att: eqx.nn.MultiheadAttention

        def __init__(self, key):
            self.att = eqx.nn.MultiheadAttention(4, 8, key=key)

        def __call__(self, x):
            return self.att(x, x, x)

    model = Model(jax.random.PRNGKey(0))
    graph = capture_jax_graph(model, (jnp.ones((6, 8)),), __file__)["graph"]
    divs = [n["id"] for n in graph["layers"] if n["op"] == "div"]
    weights = [i for i in divs if next(n for n in graph["layers"] if n["id"] == i)["outputs"][0]["shape"] == [4, 6, 6]]
    assert len(weights) == 1 and len(divs) == 2  # the other div scales the queries ([6, 4, 2]): no heads
    captured = capture_jax_graph(model, (jax.random.normal(jax.random.PRNGKey(1), (6, 8)),), __file__,
                                 checkpoints=weights)
    found = records(captured, channels_first=False)
    heads = found[weights[0]]
    assert heads["layout"] == "heads", heads.get("problem")
    assert heads["count"] == 4 and heads["mapShape"] == [6, 6]
    assert np.allclose(np.asarray(heads["maps"]).sum(axis=-1), 1, atol=1e-5)  # rows of probabilities


def test_flax_and_equinox_1d_convs_norms_and_relus_are_channels_by_length():
    class FlaxNet(nnx.Module):  # channels last: [B, L, C]
        def __init__(self, rngs):
            self.conv = nnx.Conv(3, 5, kernel_size=(3,), rngs=rngs)
            self.norm = nnx.BatchNorm(5, rngs=rngs)

        def __call__(self, x):
            return nnx.relu(self.norm(self.conv(x)))

    class EqxNet(eqx.Module):  # channels first, per example, vmapped: [B, C, L]
        conv: eqx.nn.Conv1d

        def __init__(self, key):
            self.conv = eqx.nn.Conv1d(3, 5, 3, padding=1, key=key)

        def __call__(self, x):
            return jax.nn.relu(jax.vmap(self.conv)(x))

    cases = [(FlaxNet(nnx.Rngs(0)), (2, 7, 3), ["conv", "norm", "relu_0"], -1),
             (EqxNet(jax.random.PRNGKey(0)), (2, 3, 7), ["conv", "relu_0"], 1)]
    for model, shape, names, channel_axis in cases:
        captured = capture_jax_graph(model, (jax.random.normal(jax.random.PRNGKey(2), shape),), __file__,
                                     checkpoints=names)
        found = records(captured, channels_first=False)
        for name in names:
            record = found[name]
            assert (record["layout"], record["count"], record["length"]) == ("channels-length", 5, 7), \
                (type(model).__name__, name, record.get("problem"))
            value = np.moveaxis(np.asarray(captured["activations"][name]), channel_axis, 1)[0]
            assert np.allclose(record["matrix"], value, atol=1e-5), name


def test_a_layer_norm_over_tokens_stays_tokens():
    """A norm with a (C,) scale over [B, T, C] is no channel norm: its output is token features."""
    model = nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6))
    captured = capture_torch_graph(model.eval(), (torch.randn(1, 6, 6),), __file__, checkpoints=["1"])
    assert records(captured, channels_first=True)["1"]["layout"] == "tokens"


def test_layout_channels_follows_a_flax_producer_that_keeps_channels_last():
    """``:layout: channels`` says "channel data"; Flax's NLC and NHWC outputs keep them last."""

    class Convs(nnx.Module):
        def __init__(self, rngs):
            self.conv1d = nnx.Conv(3, 5, kernel_size=(3,), rngs=rngs)
            self.conv2d = nnx.Conv(3, 5, kernel_size=(3, 3), rngs=rngs)

        def __call__(self, x):
            return self.conv1d(x[:, 0]).sum() + self.conv2d(x).sum()

    captured = capture_jax_graph(Convs(nnx.Rngs(0)), (jnp.ones((1, 7, 6, 3)),), __file__,
                                 checkpoints=["conv1d", "conv2d"])
    found = records(captured, channels_first=False, layout="channels")
    assert (found["conv1d"]["layout"], found["conv1d"]["count"], found["conv1d"]["length"]) == ("channels-length", 5, 6)
    assert (found["conv2d"]["layout"], found["conv2d"]["count"], found["conv2d"]["mapShape"]) == ("channels", 5, [7, 6])


def test_gpt2s_conv1d_is_a_linear_layer_over_tokens():
    """transformers' ``Conv1D`` (GPT-2) is a linear layer with its weight transposed: tokens x features."""
    transformers = pytest.importorskip("transformers")
    config = transformers.GPT2Config(n_layer=1, n_embd=8, n_head=2, vocab_size=16, n_positions=8)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).eval()
    names = ["transformer.h.0.attn.c_attn", "transformer.h.0.mlp.c_proj"]
    captured = capture_torch_graph(model, (torch.tensor([[1, 2, 3, 4, 5]]),), __file__, checkpoints=names)
    found = records(captured, channels_first=True)
    assert [found[name]["layout"] for name in names] == ["tokens", "tokens"], [found[n].get("problem") for n in names]


class Residual(nn.Module):
    """A ResNet basic block: its output is a ReLU of a sum, made by convolutions and norms."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)) + x)


def test_a_stage_of_residual_blocks_is_channel_maps_in_the_capture_and_the_worker():
    model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.Sequential(Residual(6), Residual(6))).eval()
    captured = capture_torch_graph(model, (torch.randn(1, 3, 8, 8),), __file__, checkpoints=["1"])
    assert layout_hints(captured["graph"], captured["activations"], channels_first=True)["1"] == "channels"
    record = records(captured, channels_first=True)["1"]
    assert (record["layout"], record["count"], record["mapShape"]) == ("channels", 6, [8, 8])


def test_flax_nnx_attention_weights_with_a_unit_group_axis_are_heads():
    """nnx.MultiHeadAttention's weights are [batch, 1, heads, T, T] (a unit key-value group axis)."""
    model = nnx.MultiHeadAttention(num_heads=2, in_features=8, decode=False, rngs=nnx.Rngs(0))
    x = jax.random.normal(jax.random.PRNGKey(3), (1, 5, 8))
    graph = capture_jax_graph(model, (x,), __file__)["graph"]
    weights = [n["id"] for n in graph["layers"] if n["op"] == "div" and len(n["outputs"][0]["shape"]) == 5]
    assert len(weights) == 1
    record = records(capture_jax_graph(model, (x,), __file__, checkpoints=weights), channels_first=False)[weights[0]]
    assert (record["layout"], record["count"], record["mapShape"]) == ("heads", 2, [5, 5]), record.get("problem")
    assert np.allclose(np.asarray(record["maps"]).sum(axis=-1), 1, atol=1e-5)


def test_a_weight_normed_convolution_is_channel_data():
    """``weight_norm`` and ``spectral_norm`` (``torch.nn.utils.parametrizations``) make the layer a
    ``ParametrizedConv1d``: Wav2Vec2's positional convolution [1, 16, T] was read as tokens x
    features ("token 39, 40 features"), as were the slice and GELU after it."""
    transformers = pytest.importorskip("transformers")
    config = transformers.Wav2Vec2Config(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                         intermediate_size=32, conv_dim=(8, 8), conv_stride=(5, 2),
                                         conv_kernel=(10, 3), num_conv_pos_embeddings=4,
                                         num_conv_pos_embedding_groups=2)
    torch.manual_seed(0)
    model = transformers.Wav2Vec2Model(config).eval()
    assert type(model.encoder.pos_conv_embed.conv).__name__ == "ParametrizedConv1d"  # what this test is about
    names = ["encoder.pos_conv_embed.conv", "encoder.pos_conv_embed.padding", "encoder.pos_conv_embed.activation"]
    captured = capture_torch_graph(model, (torch.randn(1, 400),), __file__, checkpoints=names)
    found = records(captured, channels_first=True)
    for name in names:
        assert (found[name]["layout"], found[name]["count"]) == ("channels-length", 16), (name, found[name])

    conv2d = nn.utils.parametrizations.spectral_norm(nn.Conv2d(2, 5, 3, padding=1))
    captured = capture_torch_graph(nn.Sequential(conv2d, nn.ReLU()).eval(), (torch.randn(1, 2, 6, 6),), __file__,
                                   checkpoints=["0", "1"])
    found = records(captured, channels_first=True)
    for name in ("0", "1"):
        assert (found[name]["layout"], found[name]["count"], found[name]["mapShape"]) == ("channels", 5, [6, 6]), name


class PatchEmbedding(nn.Module):
    """A ViT patch embedding: conv, ``flatten(2)`` (channels x positions), then ``transpose`` (tokens)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, 5, 2, stride=2)

    def forward(self, x):
        maps = self.proj(x)
        flat = maps.flatten(2)  # [1, 5, 9]
        viewed = torch.relu(maps.view(1, 5, -1))
        return flat.transpose(1, 2), viewed


def test_channel_maps_flattened_to_positions_are_channels_by_length():
    """``conv(x).flatten(2)`` is [1, 5, 9]: 5 channels along 9 positions, drawn as "token 8, 9 features"
    (a wrong label); the tokens after ``transpose(1, 2)`` stay tokens."""
    names = ["flatten_0", "view_0", "relu_0", "transpose_0"]
    captured = capture_torch_graph(PatchEmbedding().eval(), (torch.randn(1, 3, 6, 6),), __file__, checkpoints=names)
    found = records(captured, channels_first=True)
    for name in names[:3]:
        record = found[name]
        assert (record["layout"], record["count"], record["length"]) == ("channels-length", 5, 9), (name, record)
        assert np.allclose(record["matrix"], captured["activations"][name].numpy()[0], atol=1e-6), name
    assert found["transpose_0"]["layout"] == "tokens"

    class Flattened(nnx.Module):  # Flax keeps channels last: [1, 3, 3, 5] -> [1, 9, 5]
        def __init__(self, rngs):
            self.conv = nnx.Conv(3, 5, kernel_size=(2, 2), strides=(2, 2), rngs=rngs)

        def __call__(self, x):
            return self.conv(x).reshape(1, 9, 5)

    captured = capture_jax_graph(Flattened(nnx.Rngs(0)), (jnp.ones((1, 6, 6, 3)),), __file__,
                                 checkpoints=["reshape_0"])
    assert layout_hints(captured["graph"], captured["activations"])["reshape_0"] == "length-channels"
    record = records(captured, channels_first=False)["reshape_0"]  # drawn with the channels as rows
    assert (record["layout"], record["count"], record["length"]) == ("channels-length", 5, 9), record
    assert np.allclose(record["matrix"], np.asarray(captured["activations"]["reshape_0"])[0].T, atol=1e-6)


def test_tokens_transposed_to_features_by_positions_are_channels_by_length():
    """Segformer turns its tokens [1, 64, 8] into [1, 8, 64] with ``transpose(1, 2)`` before a
    convolution: 8 channels along 64 positions, drawn as "token 7, 64 features" (a wrong label).
    A swap of the last two axes flips the layout it read; the patch embedding's own transpose of
    channels x length back to tokens stays tokens."""
    transformers = pytest.importorskip("transformers")
    config = transformers.SegformerConfig(num_channels=3, num_encoder_blocks=1, depths=[1], sr_ratios=[2],
                                          hidden_sizes=[8], patch_sizes=[3], strides=[2], num_attention_heads=[1],
                                          mlp_ratios=[2])
    torch.manual_seed(0)
    model = transformers.SegformerModel(config).eval()
    block = "stages.0.blocks.0"
    swapped = {f"{block}.attention.sequence_reduction.transpose_0": 8, f"{block}.mlp.dwconv.transpose_0": 16}
    tokens = ["stages.0.patch_embeddings.transpose_0", f"{block}.mlp.dwconv.transpose_1"]
    captured = capture_torch_graph(model, (torch.randn(1, 3, 16, 16),), __file__, checkpoints=[*swapped, *tokens])
    found = records(captured, channels_first=True)
    for name, channels in swapped.items():
        record = found[name]
        assert (record["layout"], record["count"], record["length"]) == ("channels-length", channels, 64), record
        value = captured["activations"][name].numpy()[0]
        assert np.allclose(record["values"], value.mean(axis=1), atol=1e-6), name  # one value per channel
    assert [found[name]["layout"] for name in tokens] == ["tokens", "tokens"]


def test_a_jax_pooling_takes_its_channel_axis_from_the_layer_that_fed_it():
    """A pooling has no weights to count its channels by: Equinox's ``MaxPool2d`` of ``[6, 8, 8]``
    maps and Flax's ``max_pool`` of ``[1, 10, 6]`` were drawn as tokens x features (a wrong label).
    The convolution that fed the pooling says which axis holds the channels."""

    class Pooled(eqx.Module):
        conv: eqx.nn.Conv2d
        pool: eqx.nn.MaxPool2d
        norm: eqx.nn.GroupNorm

        def __init__(self, key):
            self.conv = eqx.nn.Conv2d(3, 6, 3, padding=1, key=key)
            self.pool = eqx.nn.MaxPool2d(2, 2)
            self.norm = eqx.nn.GroupNorm(2, 6)  # unbatched [C, H, W]: no batch axis before the channels

        def __call__(self, x):
            return self.norm(self.pool(jax.nn.relu(self.conv(x))))

    captured = capture_jax_graph(Pooled(jax.random.PRNGKey(0)), (jnp.ones((3, 8, 8)),), __file__,
                                 checkpoints=["pool", "norm"])
    found = records(captured, channels_first=False)
    for name in ("pool", "norm"):
        record = found[name]
        assert (record["layout"], record["count"], record["mapShape"]) == ("channels", 6, [4, 4]), (name, record)

    import flax.linen as lnn

    class Conv1dPool(lnn.Module):
        @lnn.compact
        def __call__(self, x):
            return lnn.max_pool(lnn.Conv(6, (3,))(x), (2,), strides=(2,))

    model = Conv1dPool()
    params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 10, 3)))
    captured = capture_jax_graph(lambda x: model.apply(params, x), (jnp.ones((1, 10, 3)),), __file__,
                                 checkpoints=["reduce_window_max_0"])
    record = records(captured, channels_first=False)["reduce_window_max_0"]
    assert (record["layout"], record["count"], record["length"]) == ("channels-length", 6, 5), record


class RawAndHidden(nn.Module):
    """A raw 3-axis input scaled (no producer says what its axes are) beside a linear, ReLU and norm."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):
        raw = x * 2  # [B, C, L] or [B, T, F]: only the author knows
        return raw.sum() + self.norm(torch.relu(self.proj(x))).sum()


class JaxRawAndHidden(nnx.Module):
    """The same in Flax NNX: a Dense is a ``dot_general``, the norm a chain of reductions."""

    def __init__(self, rngs) -> None:
        self.proj = nnx.Linear(8, 8, rngs=rngs)
        self.norm = nnx.LayerNorm(8, rngs=rngs)

    def __call__(self, x):
        raw = x * 2.0
        return raw.sum() + self.norm(nnx.relu(self.proj(x))).sum()


def _raw_and_hidden(backend: str):
    if backend == "torch":
        torch.manual_seed(0)
        return capture_torch_graph(RawAndHidden().eval(), (torch.randn(2, 6, 8),), __file__,
                                   checkpoints=["mul_0", "proj", "relu_0", "norm"]), True
    captured = capture_jax_graph(JaxRawAndHidden(nnx.Rngs(0)), (jnp.ones((2, 6, 8)),), __file__,
                                 checkpoints=["mul_0", "proj", "relu_0", "norm"])
    return captured, False


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_raw_three_axis_tensor_is_not_guessed_as_tokens(backend):
    """Tokens x features only where the producer says so (a linear, a norm over the last axis, or
    a ReLU of one); a scaled raw input could be channels x length: no guessed labels, and the
    problem says what to write."""
    captured, channels_first = _raw_and_hidden(backend)
    found = records(captured, channels_first=channels_first)
    raw = found["mul_0"]
    assert raw["layout"] is None and "axes" not in raw and "values" not in raw, raw
    assert ":layout: tokens" in raw["problem"] and ":layout: channels-length" in raw["problem"], raw["problem"]
    for name in ("proj", "relu_0", "norm"):
        assert found[name]["layout"] == "tokens", (name, found[name].get("problem"))
        assert found[name]["axes"] == ["token", "feature"]
    # the author's :layout: wins and draws the raw tensor as they say
    assert records(captured, channels_first, layout="tokens")["mul_0"]["layout"] == "tokens"
    length = records(captured, channels_first, layout="channels x length")["mul_0"]
    assert (length["layout"], length["count"], length["length"]) == ("channels-length", 6, 8)


def test_a_transformer_hidden_state_is_tokens():
    """transformers' Llama: the embedding, a decoder layer's output (a residual add) and the final
    RMSNorm are token features, read off their producers, with no problem to warn about."""
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16)
    torch.manual_seed(0)
    model = transformers.LlamaModel(config).eval()
    names = ["embed_tokens", "layers.0", "layers.0.mlp", "norm"]
    captured = capture_torch_graph(model, (torch.tensor([[1, 2, 3, 4, 5]]),), __file__, checkpoints=names)
    found = records(captured, channels_first=True)
    for name in names:
        assert found[name]["layout"] == "tokens" and "problem" not in found[name], (name, found[name].get("problem"))


class HandNorm(nn.Module):
    """An RMSNorm written by hand, as lessons do: a last-axis reduction and a gain per feature."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x / x.pow(2).mean(-1, keepdim=True).add(1e-6).sqrt() * self.gain


def test_a_hand_written_norm_over_the_last_axis_is_tokens():
    """The norm's output reads as token features although nothing before it says so; the same
    division without the per-feature gain (an instance norm of channels over positions reads
    the same way) is not guessed."""
    class Unscaled(nn.Module):
        def forward(self, x):
            return x / x.pow(2).mean(-1, keepdim=True).sqrt()

    x = torch.randn(1, 3, 6)
    captured = capture_torch_graph(nn.Sequential(HandNorm(6)).eval(), (x,), __file__, checkpoints=["0"])
    assert records(captured, channels_first=True)["0"]["layout"] == "tokens"
    captured = capture_torch_graph(nn.Sequential(Unscaled()).eval(), (x,), __file__, checkpoints=["0"])
    assert records(captured, channels_first=True)["0"]["layout"] is None
