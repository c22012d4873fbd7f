"""Words for a patching figure: its title with the two baselines, the alt text that states the result
("patching head 1.2 restores 83% of the logit difference; every other head under 9%"), how to read
it, and the line ``tensorviz show`` prints.

Generated from the effects, so the words change when the model does; an author's ``:alt:`` and
``:title:`` still come first. Heads are named ``head L.H`` (layer ``L``, head ``H``, counted from 0).
"""

from __future__ import annotations

import math
from typing import Any

from ...core.words import plural
from ...render.numbers import fmt
from .metric import built_in_tokens

#: what each ``:patch:`` replaces, as a phrase
SITE_WORDS = {
    "residual": "the residual stream after each layer, at each position",
    "attn-out": "each layer's attention output, at each position",
    "mlp-out": "each layer's MLP output, at each position",
    "heads": "each attention head's output, at every position",
}
#: below this (as a fraction), a negative effect is not worth a word in the alt text
WORTH_SAYING = 0.05
#: a patch that restores at least this share is named after the strongest one (at most MORE_NAMED)
NAMED_SHARE, MORE_NAMED = 0.2, 3


def metric_words(data: dict[str, Any], article: str = "") -> str:
    """The metric as a reader reads it: "the logit difference of A over B" (the tokens' labels where
    ``:tokens:`` gave them, else their ids)."""
    pair = built_in_tokens(data["metric"])
    if pair is None:
        return f"{article}metric {data['metric'].rpartition(':')[2]}"
    names = data.get("metricTokens") or [f"token {n}" for n in pair]
    return f"{article}logit difference of {names[0]} over {names[1]}"


def percent(value: float) -> str:
    return f"{round(value * 100)}%".replace("-", "\u2212")


def cell_name(data: dict[str, Any], row: int, column: int) -> str:
    """``head 1.2``, or ``the residual stream after layer 1 at position 7 (A)``."""
    if data["patch"] == "heads":
        return f"head {row}.{column}"
    place = {"residual": "the residual stream after", "attn-out": "the attention output of",
             "mlp-out": "the MLP output of"}[data["patch"]]
    number, _, label = data["columns"][column].partition(" ")
    return f"{place} layer {row} at position {number} ({label})"


def baselines(data: dict[str, Any]) -> str:
    return f"clean {fmt(data['clean'])}, corrupted {fmt(data['corrupted'])}"


def patch_title(data: dict[str, Any], given: str | None) -> str:
    """The caption: the author's title or what was patched, and always both baselines."""
    title = given or f"Activation patching of {SITE_WORDS[data['patch']].split(',')[0]}"
    return f"{title} ({metric_words(data, 'the ')}: {baselines(data)})"


def ranked(data: dict[str, Any]) -> list[tuple[float, int, int]]:
    """(effect, row, column) of every cell, the most restoring first (ties: the first cell)."""
    cells = [(value, r, c) for r, row in enumerate(data["effects"]) for c, value in enumerate(row)]
    return sorted(cells, key=lambda cell: (-cell[0], cell[1], cell[2]))


def result_sentence(data: dict[str, Any]) -> str:
    """The strongest patch, the others that restore a share worth naming, and how far behind every
    other one is, in words."""
    cells = ranked(data)
    best, row, column = cells[0]
    said = f"patching {cell_name(data, row, column)} restores {percent(best)} of {metric_words(data, 'the ')}"
    named = 1
    while named < min(len(cells), 1 + MORE_NAMED) and cells[named][0] >= NAMED_SHARE:
        value, row, column = cells[named]
        said += f"; {cell_name(data, row, column)} {percent(value)}"
        named += 1
    other = "head" if data["patch"] == "heads" else "place"
    if named < len(cells):
        rest = cells[named][0]
        said += (f"; every other {other} under {math.floor(rest * 100) + 1}%" if rest > 0
                 else f"; no other {other} restores any of it")
        worst, row, column = cells[-1]
        if worst < -WORTH_SAYING:
            said += f"; {cell_name(data, row, column)} moves it the other way ({percent(worst)})"
    return said


def patch_alt(data: dict[str, Any]) -> str:
    shape = (f"{plural(len(data['rows']), 'layer')} by "
             f"{plural(len(data['columns']), 'head' if data['patch'] == 'heads' else 'position')}")
    return (f"Activation patching of {SITE_WORDS[data['patch']]}, {shape}: {result_sentence(data)}. "
            f"Baselines: {baselines(data)}.")


def patch_long_description(data: dict[str, Any], colormap: str) -> str:
    """How to read the heatmap."""
    across = ("a column per head (its slice of the attention output projection's input, replaced at every "
              "position)" if data["patch"] == "heads" else "a column per position of the input")
    return (f"The corrupted input was run again with one activation replaced by its value in the clean run, once "
            f"for every cell: a row per layer, {across}. Each cell is (patched - corrupted) / (clean - corrupted) "
            f"of {metric_words(data, 'the ')}, where the clean input gives {fmt(data['clean'])} and the corrupted "
            f"one {fmt(data['corrupted'])}: 1 means the patch restores the clean value, 0 that it changes nothing, "
            f"a negative value that it moves the metric further from the clean one. The diverging colours "
            f"({colormap}) are centred on zero.")


def summary(data: dict[str, Any]) -> str:
    """The line ``tensorviz show`` prints."""
    return (f"patch {data['patch']}, {len(data['rows'])} x {len(data['columns'])} ({data.get('dtype')}); "
            f"{baselines(data)}; {result_sentence(data)}")
