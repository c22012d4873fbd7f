"""Words for a patching figure: its title with the two baselines, the alt text that states the result
("patching head 1.2 restores 83% of the logit difference; every other head under 9%"), how to read
it, and the line ``tensorviz show`` prints.

Generated from the effects, so the words change when the model does; an author's ``:alt:`` and
``:title:`` still come first. Heads are named ``head L.H`` (layer ``L``, head ``H``, counted from 0).
Every sentence is one message of the package's catalogue with named fields (``core/i18n.py``), so a
translated page says it in its language; ``tensorviz show`` (no catalogue) says it in English.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.i18n import N_, _, counted
from ...render.numbers import fmt
from .metric import built_in_tokens

#: what each ``:patch:`` replaces, as a phrase of the alt text (each of these is translated where shown)
SITE_WORDS = {
    "residual": N_("the residual stream after each layer, at each position"),
    "attn-out": N_("each layer's attention output, at each position"),
    "mlp-out": N_("each layer's MLP output, at each position"),
    "heads": N_("each attention head's output, at every position"),
}
#: the caption of a figure without ``:title:``, by ``:patch:``
SITE_TITLES = {
    "residual": N_("Activation patching of the residual stream after each layer"),
    "attn-out": N_("Activation patching of each layer's attention output"),
    "mlp-out": N_("Activation patching of each layer's MLP output"),
    "heads": N_("Activation patching of each attention head's output"),
}
#: where one cell's patch is, by ``:patch:`` (heads are ``head {layer}.{head}``)
CELL_PLACES = {
    "residual": N_("the residual stream after layer {layer} at position {position} ({label})"),
    "attn-out": N_("the attention output of layer {layer} at position {position} ({label})"),
    "mlp-out": N_("the MLP output of layer {layer} at position {position} ({label})"),
}
#: below this (as a fraction), a negative effect is not worth a word in the alt text
WORTH_SAYING = 0.05
#: a patch that restores at least this share is named after the strongest one (at most MORE_NAMED)
NAMED_SHARE, MORE_NAMED = 0.2, 3


def metric_words(data: dict[str, Any]) -> str:
    """The metric as a reader reads it: "the logit difference of A over B" (the tokens' labels where
    ``:tokens:`` gave them, else their ids)."""
    pair = built_in_tokens(data["metric"])
    if pair is None:
        return _("the metric {name}").format(name=data["metric"].rpartition(":")[2])
    names = data.get("metricTokens") or [_("token {label}").format(label=n) for n in pair]
    return _("the logit difference of {first} over {second}").format(first=names[0], second=names[1])


def percent(value: float) -> str:
    return f"{round(value * 100)}%".replace("-", "\u2212")


def shown_rows(data: dict[str, Any]) -> list[str]:
    """Each layer's label as the page shows it (the artifact records ``layer N``, in English)."""
    return [_("layer {number}").format(number=n) for n in range(len(data["rows"]))]


def shown_columns(data: dict[str, Any]) -> list[str]:
    """Each column's label as the page shows it: ``head N`` in the page's language, or the recorded
    ``position token`` label."""
    if data["patch"] == "heads":
        return [_("head {number}").format(number=n) for n in range(len(data["columns"]))]
    return list(data["columns"])


def cell_name(data: dict[str, Any], row: int, column: int) -> str:
    """``head 1.2``, or ``the residual stream after layer 1 at position 7 (A)``."""
    if data["patch"] == "heads":
        return _("head {layer}.{head}").format(layer=row, head=column)
    number, _space, label = data["columns"][column].partition(" ")
    return _(CELL_PLACES[data["patch"]]).format(layer=row, position=number, label=label)


def baselines(data: dict[str, Any]) -> str:
    return _("clean {clean}, corrupted {corrupted}").format(clean=fmt(data["clean"]), corrupted=fmt(data["corrupted"]))


def patch_title(data: dict[str, Any], given: str | None) -> str:
    """The caption: the author's title or what was patched, and always both baselines."""
    return _("{title} ({metric}: {baselines})").format(
        title=given or _(SITE_TITLES[data["patch"]]), metric=metric_words(data), baselines=baselines(data))


def ranked(data: dict[str, Any]) -> list[tuple[float, int, int]]:
    """(effect, row, column) of every cell, the most restoring first (ties: the first cell)."""
    cells = [(value, r, c) for r, row in enumerate(data["effects"]) for c, value in enumerate(row)]
    return sorted(cells, key=lambda cell: (-cell[0], cell[1], cell[2]))


def result_sentence(data: dict[str, Any]) -> str:
    """The strongest patch, the others that restore a share worth naming, and how far behind every
    other one is, in words."""
    cells = ranked(data)
    best, row, column = cells[0]
    said = [_("patching {place} restores {share} of {metric}").format(
        place=cell_name(data, row, column), share=percent(best), metric=metric_words(data))]
    named = 1
    while named < min(len(cells), 1 + MORE_NAMED) and cells[named][0] >= NAMED_SHARE:
        value, row, column = cells[named]
        said.append(_("{place} {share}").format(place=cell_name(data, row, column), share=percent(value)))
        named += 1
    heads = data["patch"] == "heads"
    if named < len(cells):
        rest = cells[named][0]
        if rest > 0:
            under = f"{math.floor(rest * 100) + 1}%"
            said.append((_("every other head under {share}") if heads else _("every other place under {share}"))
                        .format(share=under))
        else:
            said.append(_("no other head restores any of it") if heads else _("no other place restores any of it"))
        worst, row, column = cells[-1]
        if worst < -WORTH_SAYING:
            said.append(_("{place} moves it the other way ({share})").format(
                place=cell_name(data, row, column), share=percent(worst)))
    return "; ".join(said)


def patch_alt(data: dict[str, Any]) -> str:
    columns = (counted(len(data["columns"]), "head", "heads") if data["patch"] == "heads"
               else counted(len(data["columns"]), "position", "positions"))
    return _("Activation patching of {site}, {layers} by {columns}: {result}. Baselines: {baselines}.").format(
        site=_(SITE_WORDS[data["patch"]]), layers=counted(len(data["rows"]), "layer", "layers"), columns=columns,
        result=result_sentence(data), baselines=baselines(data))


def patch_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the heatmap."""
    across = (_("a column per head (its slice of the attention output projection's input, replaced at every "
                "position)") if data["patch"] == "heads" else _("a column per position of the input"))
    return _("The corrupted input was run again with one activation replaced by its value in the clean run, once "
             "for every cell: a row per layer, {across}. Each cell is (patched - corrupted) / (clean - corrupted) "
             "of {metric}, where the clean input gives {clean} and the corrupted one {corrupted}: 1 means the "
             "patch restores the clean value, 0 that it changes nothing, a negative value that it moves the "
             "metric further from the clean one. The diverging colours ({colormap}) are centred on zero.").format(
        across=across, metric=metric_words(data), clean=fmt(data["clean"]), corrupted=fmt(data["corrupted"]),
        colormap=colormap)


def summary(data: dict[str, Any]) -> str:
    """The line ``tensorviz show`` prints."""
    return (f"patch {data['patch']}, {len(data['rows'])} x {len(data['columns'])} ({data.get('dtype')}); "
            f"{baselines(data)}; {result_sentence(data)}")
