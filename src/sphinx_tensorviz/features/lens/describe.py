"""Words for a logit lens: the alt text, the long description, each column's label and each cell's.

Stated from the data, so the figure's words say the result (at which layer the target becomes the
top-1 prediction at each position, and how probable it is at the end) and change when it does.
Layers are counted from 0 (layer 0 is the residual stream after the first block), positions too.
Every sentence is one message of the package's catalogue with named fields (``core/i18n.py``), so a
translated build says it in its language; ``tensorviz show`` (no catalogue) says it in English.
"""

from __future__ import annotations

from typing import Any

from ...core.i18n import _, counted, ngettext
from ...render.numbers import fmt


def token_label(data: dict[str, Any], token: int) -> str:
    """A token id's label: ``:vocabulary:``'s, or the id."""
    return (data.get("vocabulary") or {}).get(str(token), str(token))


def column_labels(data: dict[str, Any]) -> list[str]:
    """Each drawn position as ``position:token`` (a repeated token stays told apart)."""
    return [f"{p}:{data['tokens'][p]}" for p in data["positions"]]


def layer_labels(data: dict[str, Any]) -> list[str]:
    """Each layer's label, as the grid's rows and the tables' columns name it."""
    return [_("layer {number}").format(number=n) for n in range(len(data["probabilities"]))]


def target_words(data: dict[str, Any]) -> str:
    """What the cells' probability is of, with its "of" ("of the next input token", "of token 7", "of the
    target token"): one phrase, so a language that joins "of" to its article ("du jeton") can."""
    following = len(data["positions"]) == len(data["inputs"]) - 1 and all(
        t == data["inputs"][p + 1] for p, t in zip(data["positions"], data["targets"]))
    if following:
        return _("of the next input token")
    if len(set(data["targets"])) == 1:
        return _("of token {label}").format(label=token_label(data, data["targets"][0]))
    return _("of the target token")


def settled_layers(data: dict[str, Any]) -> list[int | None]:
    """For each drawn position, the layer from which on the target is the top-1 prediction at every
    later layer (``None``: it is not the top-1 after the last layer)."""
    found: list[int | None] = []
    for column, target in enumerate(data["targets"]):
        tops = [layer[column][0] for layer in data["topIds"]]
        since = None
        for layer in range(len(tops) - 1, -1, -1):
            if tops[layer] != target:
                break
            since = layer
        found.append(since)
    return found


def _ranges(numbers: list[int]) -> str:
    """``1, 2, 3, 5`` as ``1–3, 5``."""
    parts: list[str] = []
    start = previous = None
    for n in [*numbers, None]:
        if n is not None and previous is not None and n == previous + 1:
            previous = n
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}\u2013{previous}")
        start = previous = n
    return ", ".join(parts)


def settled_sentence(data: dict[str, Any]) -> str:
    """Positions grouped by the layer from which the target is the top-1 prediction."""
    groups: dict[int | None, list[int]] = {}
    for position, since in zip(data["positions"], settled_layers(data)):
        groups.setdefault(since, []).append(position)
    parts = [_("from layer {layer} on at {positions}").format(layer=since, positions=_positions(groups[since]))
             for since in sorted(k for k in groups if k is not None)]
    if not parts:
        return _("The target is not the top-1 prediction after the last layer at any position.")
    if None not in groups:
        return _("The target is the top-1 prediction {layers}.").format(layers="; ".join(parts))
    return _("The target is the top-1 prediction {layers}; it is not the top-1 after the last layer at "
             "{positions}.").format(layers="; ".join(parts), positions=_positions(groups[None]))


def _positions(positions: list[int]) -> str:
    return ngettext("position {numbers}", "positions {numbers}", len(positions)).format(numbers=_ranges(positions))


def final_sentence(data: dict[str, Any]) -> str:
    """The target's probability after the last layer: its mean and range."""
    final = data["probabilities"][-1]
    low = min(range(len(final)), key=lambda n: final[n])
    high = max(range(len(final)), key=lambda n: final[n])
    if len(final) == 1:
        return _("After the last layer its probability is {probability}.").format(probability=fmt(final[0], 2))
    return _("After the last layer its probability is {mean} on average, from {low} (position {low_position}) "
             "to {high} (position {high_position}).").format(
        mean=fmt(sum(final) / len(final), 2), low=fmt(final[low], 2), low_position=data["positions"][low],
        high=fmt(final[high], 2), high_position=data["positions"][high])


def read_out_words(data: dict[str, Any]) -> str:
    """The pieces the stream was read out through: as recorded (``model.norm then lm_head``), or in general."""
    found = data.get("readOut")
    if not found:
        return _("the model's final norm and unembedding")
    if " then " in found:
        return _("the model's final norm and unembedding ({pieces})").format(pieces=found)
    return _("the model's unembedding ({pieces})").format(pieces=found)


def _shape(data: dict[str, Any]) -> str:
    tokens = data["tokens"]
    return _("{layers} by {positions} ({tokens})").format(
        layers=counted(len(data["probabilities"]), "layer", "layers"),
        positions=counted(len(data["positions"]), "position", "positions"),
        tokens=f"{' '.join(tokens[:8])}{' …' if len(tokens) > 8 else ''}")


def lens_alt(data: dict[str, Any]) -> str:
    """What the figure is, at which layer each position's target becomes top-1, the final probabilities."""
    return _("Logit lens of {shape}: the probability {target} when the residual stream after each layer is "
             "read out through {read_out}. {settled} {final}").format(
        shape=_shape(data), target=target_words(data), read_out=read_out_words(data),
        settled=settled_sentence(data), final=final_sentence(data))


def lens_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the figure; the tables follow it."""
    residual = f" ({data['residual']})" if data.get("residual") else ""
    final = ", ".join(f"{label} {fmt(p, 2)}" for label, p in zip(column_labels(data), data["probabilities"][-1]))
    return _("Each row is a layer, counted from 0: the residual stream after that block{residual}, read out as "
             "if the model ended there. Each column is an input position; each cell's colour is the probability "
             "{target} there, on one scale from 0 to 1 ({colormap}), and its text the top-1 token. The last "
             "row is the model's own prediction. {settled} The target's probability after the last layer, by "
             "position: {final}.").format(residual=residual, target=target_words(data), colormap=colormap,
                                          settled=settled_sentence(data), final=final)


def cell_words(data: dict[str, Any], layer: int, column: int) -> str:
    """One cell: where it is, the target's probability, the top-1 token."""
    top, top_p = data["topIds"][layer][column][0], data["topProbabilities"][layer][column][0]
    target = token_label(data, data["targets"][column])
    return _("layer {layer}, position {position}: target {target} {probability}; top-1 {top} ({top_probability})"
             ).format(layer=layer, position=column_labels(data)[column], target=target,
                      probability=fmt(data["probabilities"][layer][column]), top=token_label(data, top),
                      top_probability=fmt(top_p))


def top_k_words(data: dict[str, Any], layer: int, column: int) -> str:
    """A cell's top-k list: ``A 0.91, B 0.05, …``."""
    return ", ".join(f"{token_label(data, n)} {fmt(p, 2)}"
                     for n, p in zip(data["topIds"][layer][column], data["topProbabilities"][layer][column]))
