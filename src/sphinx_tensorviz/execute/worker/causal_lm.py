"""The pieces of a causal language model that the logit lens and activation patching take apart,
found without knowing the model's class.

A lesson brings Llama, GPT-2, GPT-NeoX, Qwen2, Mistral, a model of its own or one nobody has
written yet. Listing classes (or their attribute names: ``model.layers``, ``transformer.h``,
``gpt_neox.layers``) breaks on the next one, so the pieces are found by the shape every decoder-only
transformer shares, and an author names them where that shape is not there:

- **layers**: the longest :class:`torch.nn.ModuleList` of one class (the decoder blocks; each
  block's output is the residual stream after it);
- **final norm**: a normalisation registered after the layers, beside them (``norm``, ``ln_f``), or
  else the only one beside them (OPT's ``final_layer_norm``, registered before), if there is one;
- **unembedding**: what ``get_output_embeddings()`` returns (every transformers language model), or
  else the model's last direct child that is a linear map;
- in each block, the **attention** (the child named ``*attn*``/``*attention*`` that is no norm), its
  **output projection** (the attention's last child holding a 2-D weight: ``o_proj``, ``c_proj``,
  ``dense``, whose input's last axis is the heads' outputs side by side) and the **MLP**.

Names given by the author (``layers.{i}``-style patterns, see :func:`module_at`) override each
search. Everything here runs in the worker and imports PyTorch only when called.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Child names that mark a block's attention and its MLP (matched as substrings, lower case).
ATTENTION_NAMES = ("attn", "attention")
MLP_NAMES = ("mlp", "feed_forward", "ffn")


class PartsNotFound(Exception):
    """The model lacks a piece; the message says which, and which option names it."""


@dataclass
class Layer:
    """One decoder block and the modules inside it that can be read or patched."""

    block: Any
    attention: Any | None = None
    head_input: Any | None = None  #: the attention's output projection (its input holds the heads)
    mlp: Any | None = None


@dataclass
class CausalLMParts:
    layers: list[Layer]
    unembed: Any  #: hidden states [..., width] -> logits [..., vocabulary]
    final_norm: Any | None = None
    heads: int | None = None  #: attention heads per layer, where the model says
    names: dict[str, str] = field(default_factory=dict)  #: how each piece was found, for messages

    def read_out(self, hidden: Any) -> Any:
        """The logits the model would give if ``hidden`` were its last residual stream."""
        return self.unembed(self.final_norm(hidden) if self.final_norm is not None else hidden)


@dataclass(frozen=True)
class PartNames:
    """Module patterns an author gives for a model whose shape the search does not find: each a
    dotted path with ``{i}`` for the layer index (``blocks.{i}``, ``blocks.{i}.attn.out``)."""

    residual: str | None = None
    attention: str | None = None
    mlp: str | None = None
    head_input: str | None = None
    final_norm: str | None = None
    unembed: str | None = None


def module_at(model: Any, path: str) -> Any:
    """The object at a dotted path: attributes, and list/ModuleList items by integer
    (``blocks.0.attn``); works for PyTorch modules and for any Python object tree (Flax NNX,
    Equinox)."""
    found = model
    for step in path.split("."):
        try:
            found = found[int(step)] if step.isdigit() else getattr(found, step)
        except (AttributeError, IndexError, KeyError, TypeError):
            raise PartsNotFound(f"the model has no {path!r} (no {step!r} in {type(found).__name__})") from None
    return found


def layer_count(model: Any, pattern: str) -> int:
    """How many layers a ``{i}`` pattern reaches: indices from 0 until the first missing one."""
    count = 0
    while True:
        try:
            module_at(model, pattern.format(i=count))
        except PartsNotFound:
            return count
        count += 1


#: ``find_parts(final_norm=NO_NORM)``: the model has no final norm (nothing is searched for)
NO_NORM = object()


def find_parts(model: Any, names: PartNames | None = None, *, final_norm: Any = None,
               unembed: Any = None) -> CausalLMParts:
    """The model's layers, final norm, unembedding and per-layer attention/MLP, by the author's
    names where given and by the shared shape otherwise. ``final_norm`` and ``unembed``: callables
    (``hidden -> hidden``, ``hidden -> logits``) that stand in for those pieces where the model has no
    module that computes them (an unembedding tied to the embedding's matrix, as a function);
    ``final_norm=NO_NORM``: there is none."""
    names = names or PartNames()
    how: dict[str, str] = {}
    if names.residual:
        blocks = [module_at(model, names.residual.format(i=i)) for i in range(layer_count(model, names.residual))]
        if not blocks:
            try:
                module_at(model, names.residual.format(i=0))
            except PartsNotFound as exc:
                raise PartsNotFound(f":residual: {names.residual!r} names no module for layer 0: {exc}") from None
        parent, after = None, None
        how["layers"] = names.residual
    else:
        path, parent, blocks = _longest_module_list(model)
        after = path.rpartition(".")[2]
        how["layers"] = f"{path}.{{i}}"
    layers = [_layer(model, i, block, names) for i, block in enumerate(blocks)]
    unembed = unembed if unembed is not None else _unembedding(model, names)
    norm = (None if final_norm is NO_NORM else final_norm if final_norm is not None
            else module_at(model, names.final_norm) if names.final_norm
            else _norm_after(parent, after) if parent is not None else None)
    return CausalLMParts(layers=layers, unembed=unembed, final_norm=norm, heads=head_count(model, layers), names=how)


def _longest_module_list(model: Any) -> tuple[str, Any, list[Any]]:
    """(path, parent module, items) of the longest ModuleList whose items share one class."""
    import torch

    best: tuple[str, Any, list[Any]] | None = None
    for path, module in model.named_modules():
        for name, child in module.named_children():
            if not isinstance(child, torch.nn.ModuleList) or len(child) == 0:
                continue
            items = list(child)
            if len({type(item) for item in items}) != 1:
                continue
            if best is None or len(items) > len(best[2]):
                best = (f"{path}.{name}" if path else name, module, items)
    if best is None:
        raise PartsNotFound("no list of layers found (a ModuleList of blocks); name them with :residual: "
                            "(e.g. layers.{i})")
    return best


def _norm_after(parent: Any, layers_name: str) -> Any | None:
    """The normalisation registered after the layers in their parent module; else the parent's only
    normalisation (OPT registers ``final_layer_norm`` before its layers); else none. (An embedding's
    norm registered before the layers, as BLOOM's, comes with a final norm after them.)"""
    seen = False
    norms = []
    for name, child in parent.named_children():
        if name == layers_name:
            seen = True
        elif "norm" in type(child).__name__.lower():
            if seen:
                return child
            norms.append(child)
    return norms[0] if len(norms) == 1 else None


def _unembedding(model: Any, names: PartNames) -> Any:
    import torch

    if names.unembed:
        return module_at(model, names.unembed)
    getter = getattr(model, "get_output_embeddings", None)
    found = getter() if callable(getter) else None
    if found is not None:
        return found
    linear = [child for _, child in model.named_children() if isinstance(child, torch.nn.Linear)]
    if not linear:
        raise PartsNotFound("no unembedding found (get_output_embeddings(), or a last linear layer); "
                            "name it with :unembed:")
    return linear[-1]


def _layer(model: Any, index: int, block: Any, names: PartNames) -> Layer:
    def named(pattern: str | None, search: Any) -> Any:
        return module_at(model, pattern.format(i=index)) if pattern else search()

    attention = named(names.attention, lambda: _child_named(block, ATTENTION_NAMES))
    head_input = named(names.head_input, lambda: _last_projection(attention) if attention is not None else None)
    mlp = named(names.mlp, lambda: _child_named(block, MLP_NAMES))
    return Layer(block=block, attention=attention, head_input=head_input, mlp=mlp)


def _child_named(block: Any, words: tuple[str, ...]) -> Any | None:
    """The block's first direct child whose name contains one of ``words``, that is no norm and
    holds weights (``post_attention_layernorm`` and ``post_attention_dropout`` are not the attention)."""
    children = getattr(block, "named_children", None)
    for name, child in (children() if callable(children) else ()):
        if (any(word in name.lower() for word in words) and "norm" not in (name + type(child).__name__).lower()
                and any(True for _ in child.parameters())):
            return child
    return None


def _last_projection(attention: Any) -> Any | None:
    """The attention's last direct child with a 2-D weight: its output projection."""
    found = None
    for _, child in attention.named_children():
        weight = getattr(child, "weight", None)
        if getattr(weight, "ndim", 0) == 2:
            found = child
    return found


def head_count(model: Any, layers: list[Layer]) -> int | None:
    """Attention heads per layer: the model's config (``num_attention_heads``, ``n_head``) or the
    attention module's own attribute (``num_heads``, ``heads``, ``n_head``)."""
    config = getattr(model, "config", None)
    places = [config] + [layer.attention for layer in layers[:1]]
    for place in places:
        for name in ("num_attention_heads", "n_head", "num_heads", "heads", "n_heads"):
            value = getattr(place, name, None)
            if isinstance(value, int) and value > 0:
                return value
    return None


def first_tensor(output: Any) -> Any:
    """A module's main output: the tensor itself, or the first item of the tuple it returns (a
    transformers attention returns ``(output, weights)``)."""
    return output[0] if isinstance(output, (tuple, list)) else output


def with_first(output: Any, tensor: Any) -> Any:
    """``output`` with its main tensor replaced (same container), for a forward hook's return."""
    if isinstance(output, tuple):
        return (tensor, *output[1:])
    if isinstance(output, list):
        return [tensor, *output[1:]]
    return tensor
