"""What a recorded PyTorch op or layer shows: its name, its readable settings, its tensors.

Pure helpers used by :mod:`.torch_graph`; nothing here runs a model. Attention gets
special care because its settings (causal masking, scale, grouped-query heads) are
exactly what a reader needs and are invisible in the tensors' shapes alone.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from ....core.words import plural

#: Constructor attributes worth showing for a torch.nn layer, in display order.
LAYER_ATTRS = (
    "in_features", "out_features", "in_channels", "out_channels", "kernel_size", "stride",
    "padding", "dilation", "groups", "bias", "num_embeddings", "embedding_dim", "padding_idx",
    "normalized_shape", "num_features", "num_groups", "eps", "momentum", "affine",
    "elementwise_affine", "embed_dim", "num_heads", "batch_first", "input_size", "hidden_size",
    "num_layers", "dim", "start_dim", "end_dim", "approximate", "negative_slope", "p",
    "alpha", "beta", "threshold", "scale_factor", "mode", "size", "output_size",
)

#: Tensor arithmetic (method or Python operator) drawn as the torch function it is.
ARITHMETIC = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add", "add": "add",
    "__sub__": "sub", "__rsub__": "sub", "__isub__": "sub", "sub": "sub", "rsub": "sub",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul", "mul": "mul",
    "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div", "div": "div",
    "true_divide": "div",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "matmul": "matmul",
    "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow", "pow": "pow",
    "__neg__": "neg", "neg": "neg",
}

#: Argument names of a few ops whose settings matter to a reader (position 0 is the input).
OP_ARGS = {
    "stack": ("tensors", "dim"), "cat": ("tensors", "dim"), "concat": ("tensors", "dim"),
    "flatten": ("input", "start_dim", "end_dim"), "transpose": ("input", "dim0", "dim1"),
    "softmax": ("input", "dim"), "log_softmax": ("input", "dim"),
    "mean": ("input", "dim", "keepdim"), "sum": ("input", "dim", "keepdim"),
    "unsqueeze": ("input", "dim"), "squeeze": ("input", "dim"),
    "chunk": ("input", "chunks", "dim"), "split": ("input", "split_size_or_sections", "dim"),
    "triu": ("input", "diagonal"), "tril": ("input", "diagonal"),
}


#: Attention functions whose arguments are recorded as node params (query, key, value first).
ATTENTION_OPS = ("scaled_dot_product_attention",)
#: Their keyword arguments after (query, key, value), in call order.
_ATTENTION_ARGS = ("attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


def describe(tensor: torch.Tensor) -> dict[str, Any]:
    return {"shape": list(tensor.shape), "dtype": str(tensor.dtype).removeprefix("torch.")}


def op_name(resolved: str) -> tuple[str, str]:
    """(op, short) for a resolved torch name, e.g. ``torch.Tensor.__mul__`` -> ``("torch.mul", "mul")``."""
    name = resolved.removesuffix(".__get__")  # property reads such as ``x.T``
    base = name.rpartition(".")[2]
    is_method = name.startswith("torch.Tensor.")
    if base in ARITHMETIC and (is_method or name == f"torch.{base}"):
        short = ARITHMETIC[base]
        return f"torch.{short}", short
    if base == "flatten":
        return "Flatten", "flatten"
    op = "Tensor." + name.removeprefix("torch.Tensor.") if is_method else name
    return op, base.strip("_") or base


def op_params(short: str, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The few readable settings of an op (``dim`` of a stack, ``start_dim`` of a flatten)."""
    if short in ATTENTION_OPS:
        return attention_params(args, kwargs)
    if short == "expand" and args and isinstance(args[0], torch.Tensor):
        return repeat_params(args[0], args[1:], kwargs)
    names = OP_ARGS.get(short)
    if names is None:
        return {}
    given = dict(zip(names, args))
    given.update(kwargs)
    params = {}
    for name in names[1:]:
        value = jsonable(given.get(name))
        if value is not None:
            params[name] = value
    if short == "flatten":
        params.setdefault("start_dim", 0)
        if params.get("end_dim") == -1:
            del params["end_dim"]
    return params


def layer_params(module: nn.Module) -> dict[str, Any]:
    """Constructor settings of a torch.nn layer, JSON-serialisable only."""
    params = {}
    for attr in LAYER_ATTRS:
        if not hasattr(module, attr):
            continue
        value = getattr(module, attr)
        if attr == "bias" and (value is None or isinstance(value, torch.Tensor)):
            value = value is not None  # a bias *parameter* only tells us "has bias"
        value = jsonable(value)
        if value is not None:
            params[attr] = value
    return params


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON (lists for tuples), or None when it cannot be shown."""
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (tuple, list, torch.Size)):
        items = [jsonable(item) for item in value]
        return None if any(item is None for item in items) else items
    return None


def attention_params(args: tuple, kwargs: dict) -> dict[str, Any]:
    """Settings of a fused attention call: causal, scale, mask, dropout and the head counts.

    ``query_heads``/``kv_heads`` come from the tensors (``[..., heads, tokens, dim]``), so
    grouped-query attention shows as ``gqa_ratio`` even when no ``enable_gqa`` flag is set.
    """
    names = ("query", "key", "value", *_ATTENTION_ARGS)
    given = dict(zip(names, args))
    given.update(kwargs)
    query, key = given.get("query"), given.get("key")
    mask = given.get("attn_mask")
    params: dict[str, Any] = {
        "is_causal": bool(given.get("is_causal", False)),
        "scale": _scale_text(given.get("scale"), query),
        "dropout_p": jsonable(float(given.get("dropout_p") or 0.0)),
        "enable_gqa": bool(given.get("enable_gqa", False)),
        "mask": "none" if mask is None else _shape_text(mask) + f" {str(mask.dtype).removeprefix('torch.')}",
    }
    if isinstance(query, torch.Tensor) and isinstance(key, torch.Tensor) and query.dim() >= 3 and key.dim() >= 3:
        q_heads, kv_heads = int(query.shape[-3]), int(key.shape[-3])
        params["query_heads"], params["kv_heads"] = q_heads, kv_heads
        if kv_heads and q_heads != kv_heads and q_heads % kv_heads == 0:
            params["gqa_ratio"] = q_heads // kv_heads
    return params


def gqa_note(params: dict[str, Any]) -> str | None:
    """The edge note for key/value inputs of a grouped-query attention call, if it is one."""
    ratio = params.get("gqa_ratio")
    if not ratio:
        return None
    return (f"{plural(params['kv_heads'], 'key/value head')}, each shared by {ratio} of the "
            f"{params['query_heads']} query heads")


def repeat_params(tensor: torch.Tensor, sizes: tuple, kwargs: dict) -> dict[str, Any]:
    """``expand`` that repeats a size-1 axis (how ``repeat_kv`` copies key/value heads)."""
    target = sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, torch.Size)) else sizes
    target = kwargs.get("size", target)
    try:
        new = [int(n) for n in target]
    except (TypeError, ValueError):
        return {}
    old = [1] * (len(new) - tensor.dim()) + list(tensor.shape)
    repeats = {axis: n for axis, (o, n) in enumerate(zip(old, new)) if o == 1 and n > 1}
    if not repeats:
        return {}
    return {"repeats": ", ".join(f"axis {axis} ×{n}" for axis, n in repeats.items())}


def _scale_text(scale: Any, query: Any) -> Any:
    """The softmax scale as a number; the default ``1/sqrt(head_dim)`` is spelled out."""
    if scale is not None:
        return jsonable(float(scale))
    if isinstance(query, torch.Tensor) and query.dim():
        return f"1/sqrt({int(query.shape[-1])}) (default)"
    return "default"


def _shape_text(tensor: torch.Tensor) -> str:
    return "×".join(str(n) for n in tensor.shape) or "scalar"
