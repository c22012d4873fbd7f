"""Committed predictions: the choices before the figure, the answer and explanations with it.

Every builder gets the choices as a lettered list after the question, and the answer (which
choice the recorded data supports, and why each choice is or is not right) with the figure:
inside the HTML reveal, after the picture elsewhere. In HTML, ``tensorviz-explore.js`` turns the
list into a radio group (a fieldset whose legend, visually hidden, repeats the question shown
just above it for screen readers) with a button that commits the pick, reveals the
figure and says in an ``aria-live`` region whether the pick matched. The pick is kept only in
the reader's browser (``localStorage``, keyed by the figure id).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

from ..core.i18n import _
from . import svg

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def letter(index: int) -> str:
    return LETTERS[index] if index < len(LETTERS) else str(index + 1)


def choices_list(choices: list[dict[str, Any]]) -> nodes.Element:
    """The possible answers, lettered, shown with the question (no answer marked)."""
    box = nodes.container(classes=["tv-choice-list"])
    items = nodes.bullet_list()
    for index, choice in enumerate(choices):
        items += nodes.list_item("", nodes.paragraph("", f"{letter(index)}. {choice['text']}"))
    box += items
    return box


def answers(choices: list[dict[str, Any]], confirmation: str | None) -> nodes.Element:
    """Which choice is right and why each one is or is not (revealed with the figure)."""
    box = nodes.container(classes=["tv-choice-answers"])
    right = next(i for i, c in enumerate(choices) if c["correct"])
    head = nodes.paragraph(classes=["tv-choice-answer"])
    head += nodes.strong("", _("Answer: "))
    head += nodes.Text(f"{letter(right)}. {choices[right]['text']}")
    if confirmation:
        head += nodes.Text(f" ({confirmation})")
    box += head
    items = nodes.bullet_list()
    for index, choice in enumerate(choices):
        verdict = _("right") if choice["correct"] else _("not what the data shows")
        para = nodes.paragraph()
        para += nodes.strong("", f"{letter(index)}. {choice['text']}: {verdict}.")
        if choice["why"]:
            para += nodes.Text(" " + choice["why"])
        items += nodes.list_item("", para, classes=["tv-choice-why"])
    box += items
    return box


def choices_form(choices: list[dict[str, Any]], prediction: str) -> str:
    """The radio group and commit button, ``hidden`` until the script takes over."""
    tid = svg.ID_TOKEN
    radios = "".join(
        f'<div class="tv-choice"><input type="radio" name="{tid}-choice" id="{tid}-choice-{k}" value="{k}">'
        f'<label for="{tid}-choice-{k}">{letter(k)}. {svg.text(c["text"])}</label></div>'
        for k, c in enumerate(choices)
    )
    right = next(i for i, c in enumerate(choices) if c["correct"])
    legend = svg.text(_("Your prediction: {question}").format(question=prediction))
    commit = svg.text(_("Commit my prediction and reveal the figure"))
    markup = (
        f'<form class="tv-choices" hidden="" data-tv-answer="{right}">'
        # the legend names the group for a screen reader; the question is shown just above it
        f'<fieldset><legend class="tv-visually-hidden">{legend}</legend>'
        f'{radios}</fieldset>'
        f'<button type="submit" class="tv-commit">{commit}</button>'
        f'<p class="tv-choice-result" role="status" aria-live="polite"></p></form>'
    )
    return markup


def confirmation_of(choices_check: str | None, checks: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """(what the answer says about its check, a warning if the check did not confirm the answer)."""
    if not choices_check:
        return None, None
    found = next((c for c in checks if c["name"] == choices_check), None)
    if found is None:
        return None, f"the check {choices_check!r} that confirms the marked choice has no recorded result"
    if found["passed"]:
        return _("confirmed by the recorded data: {claim}").format(claim=found["description"]), None
    return (_("NOT confirmed by the recorded data: the check failed"),
            f"the choice marked correct is not confirmed by the recorded data: its check {choices_check!r} "
            f"failed: {found['description']}"
            + (f" ({found['detail']})" if found.get("detail") else ""))
