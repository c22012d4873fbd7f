"""Words for an attention grid: the alt text, the long description, and each head's sentence.

Generated from the weights (:mod:`.patterns`), so a figure names what its heads do without an author
writing it, and the words change when the weights do. Heads are named ``head L.H`` (layer ``L``, head
``H``, both counted from 0, as the model's modules are numbered).
"""

from __future__ import annotations

from typing import Any

from ...core.i18n import _, counted, ngettext
from .patterns import WORDS, Pattern, strongest


def head_name(item: dict[str, Any]) -> str:
    return _("head {layer}.{head}").format(layer=item["layer"], head=item["head"])


def map_title(item: dict[str, Any]) -> str:
    """The label drawn on each small map."""
    return _("layer {layer} head {head}").format(layer=item["layer"], head=item["head"])


def display_tokens(tokens: list[str]) -> list[str]:
    """Labels a reader can tell apart: repeated tokens get their position (``3:a``)."""
    if len(set(tokens)) == len(tokens):
        return list(tokens)
    return [f"{n}:{token}" for n, token in enumerate(tokens)]


def head_patterns(data: dict[str, Any]) -> list[Pattern]:
    return [strongest(item["weights"], data["tokens"]) for item in data["maps"]]


def head_sentence(item: dict[str, Any], pattern: Pattern) -> str:
    return f"{head_name(item)}: {pattern.sentence()}"


def _shape(data: dict[str, Any]) -> str:
    layers = sorted({item["layer"] for item in data["maps"]})
    heads = sorted({item["head"] for item in data["maps"]})
    tokens = data["tokens"]
    return _("{layers} by {heads} over {tokens} ({shown})").format(
        layers=counted(len(layers), "layer", "layers"), heads=counted(len(heads), "head", "heads"),
        tokens=counted(len(tokens), "token", "tokens"),
        shown=" ".join(tokens[:8]) + (" …" if len(tokens) > 8 else ""))


def attention_alt(data: dict[str, Any]) -> str:
    """What the grid is, then the heads with a strong pattern, grouped by pattern."""
    patterns = head_patterns(data)
    named: dict[str, list[str]] = {}
    for item, pattern in zip(data["maps"], patterns):
        named.setdefault(pattern.name or "mixed", []).append(f"{item['layer']}.{item['head']}")
    parts = []
    for name in (*WORDS, "mixed"):
        if name in named:
            which = _("{heads_word} {heads}").format(heads_word=ngettext("head", "heads", len(named[name])),
                                                     heads=", ".join(named[name]))
            pattern = _(WORDS[name]) if name in WORDS else _("no single pattern")
            parts.append(f"{which}: {pattern}")
    return _("Attention weights of {shape}, on one colour scale from 0 to 1. {heads}.").format(
        shape=_shape(data), heads="; ".join(parts))


def attention_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the grid; each head's sentence and table follow it."""
    rows = (_("each row sums to at most 1: the model's learned sink, which is no token, takes the rest")
            if data.get("learnedSink") else _("each row sums to 1"))
    return _("Each small map is one head: a row per query token, a column per key token, and each cell the "
             "weight that query gives that key ({rows}; a causal model leaves the cells right of "
             "the diagonal at 0). Darker to brighter colours ({colormap}) run from 0 to 1 on every map, so "
             "maps compare directly. The grid shows {shape}.").format(rows=rows, colormap=colormap, shape=_shape(data))
