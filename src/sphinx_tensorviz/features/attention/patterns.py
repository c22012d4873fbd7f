"""The strongest pattern of one attention head, computed from its weights.

Each pattern is a target key for every query (or, for a broad head, none), and its score is the
mean weight the queries put on their targets: a number a reader can check in the head's table.
Queries at position 0 are left out of every score, because a causal first query can only attend
to itself, which would count for "self" and "first token" at once. Induction needs repeated tokens:
a query whose token occurred before attends to the token *after* that previous occurrence (the
next token last time); queries whose induction target is themselves or their previous token are
left out, so the score says nothing the previous-token or self score already says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core.i18n import N_, _

#: a head is named for a pattern that takes at least this mean weight
STRONG = 0.5
#: a head whose weights are at least this even (normalised entropy) is broad
BROAD = 0.8

#: what each pattern means, as the sentence after "head L.H: " (translated where it is shown)
WORDS = {
    "previous": N_("each token attends to the token before it"),
    "self": N_("each token attends to itself"),
    "first": N_("each token attends to the first token"),
    "induction": N_("each token attends to the token after the previous occurrence of itself"),
    "broad": N_("attention is spread broadly over the visible tokens"),
}


@dataclass(frozen=True)
class Pattern:
    """A head's strongest pattern (``None``: no pattern is strong) and its score."""

    name: str | None
    score: float
    #: the strongest of the target patterns, when none is strong (what the head does most)
    nearest: str

    def sentence(self) -> str:
        if self.name == "broad":
            return _("{pattern} (evenness {score} of 1)").format(pattern=_(WORDS[self.name]),
                                                                  score=f"{self.score:.2f}")
        if self.name:
            return _("{pattern} (mean weight {score})").format(pattern=_(WORDS[self.name]), score=f"{self.score:.2f}")
        return _("no single pattern; the largest mean weight, {score}, is on the {target}").format(
            score=f"{self.score:.2f}", target=_target(self.nearest))


def _target(name: str) -> str:
    return {"previous": _("previous token"), "self": _("token itself"), "first": _("first token"),
            "induction": _("token after the previous occurrence")}[name]


def induction_targets(tokens: list[str]) -> dict[int, int]:
    """query -> the position after the previous occurrence of its token (see the module's note)."""
    last: dict[str, int] = {}
    targets = {}
    for query, token in enumerate(tokens):
        if token in last and last[token] + 1 < query - 1:
            targets[query] = last[token] + 1
        last[token] = query
    return targets


def scores(weights: list[list[float]], tokens: list[str]) -> dict[str, float]:
    """Mean weight on each target pattern, and the evenness of the weights (``broad``)."""
    queries = range(1, len(weights))
    if not queries:
        return {}
    found = {
        "previous": _mean([weights[q][q - 1] for q in queries]),
        "self": _mean([weights[q][q] for q in queries]),
        "first": _mean([weights[q][0] for q in queries]),
        "broad": _mean([_evenness(weights[q]) for q in queries]),
    }
    targets = induction_targets(tokens)
    if targets:
        found["induction"] = _mean([weights[q][k] for q, k in targets.items()])
    return found


def strongest(weights: list[list[float]], tokens: list[str]) -> Pattern:
    """The pattern with the largest mean weight if it is strong, else broad if the weights are even."""
    found = scores(weights, tokens)
    if not found:
        return Pattern("self", 1.0, "self")
    targeted = {name: score for name, score in found.items() if name != "broad"}
    name = max(targeted, key=lambda n: targeted[n])
    if targeted[name] >= STRONG:
        return Pattern(name, targeted[name], name)
    if found["broad"] >= BROAD:
        return Pattern("broad", found["broad"], name)
    return Pattern(None, targeted[name], name)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _evenness(row: list[float]) -> float:
    """Entropy over the keys a query sees (weight above zero), divided by its largest possible value."""
    seen = [w for w in row if w > 1e-9]
    if len(seen) < 2:
        return 0.0
    total = sum(seen)
    entropy = -sum(w / total * math.log(w / total) for w in seen)
    return entropy / math.log(len(seen))
