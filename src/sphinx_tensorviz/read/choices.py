"""``:choices:`` and ``:choices-check:``: a prediction the reader commits to.

The author lists the possible answers, marks exactly one correct and explains each. An optional
check (lesson code, run with the execution like ``:checks:``) confirms the marked answer against
the recorded data, so a changed model cannot leave a wrong "correct" answer on the page.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any


@cache
def _choices_loader() -> Any:
    """YAML where only ``true``/``false`` are booleans: a choice may be the word Yes, No, On or Off.
    (Made on first use: a build that reads no page needs no YAML.)"""
    import yaml

    class ChoicesLoader(yaml.SafeLoader):
        pass

    ChoicesLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    ChoicesLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                                        list("tTfF"))
    return ChoicesLoader


#: Keys one choice may have.
CHOICE_KEYS = {"text", "correct", "why"}


def choices_option(argument: str | None) -> list[dict[str, Any]]:
    """A YAML list like ``[{text: Flatter, correct: true, why: ...}, {text: Sharper, why: ...}]``."""
    import yaml

    try:
        value = yaml.load(argument or "", Loader=_choices_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML/JSON: {exc}") from None
    if not isinstance(value, list) or len(value) < 2:
        raise ValueError("give a YAML list of at least two choices, like "
                         "[{text: Flatter, correct: true, why: ...}, {text: Sharper, why: ...}]")
    choices = []
    for number, item in enumerate(value, start=1):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or not isinstance(item.get("text"), (str, int, float)):
            raise ValueError(f"choice {number} needs a 'text'")
        unknown = sorted(set(item) - CHOICE_KEYS)
        if unknown:
            raise ValueError(f"choice {number} has unknown key {unknown[0]!r} (known: text, correct, why)")
        if not isinstance(item.get("correct", False), bool):
            raise ValueError(f"choice {number}: 'correct' must be true or false")
        choices.append({"text": " ".join(str(item["text"]).split()), "correct": item.get("correct", False),
                        "why": " ".join(str(item.get("why") or "").split())})
    marked = [c for c in choices if c["correct"]]
    if len(marked) != 1:
        raise ValueError(f"mark exactly one choice 'correct: true' ({len(marked)} are marked)")
    return choices


def merge_choices(values: dict[str, Any]) -> None:
    """Check the options agree, and run ``:choices-check:`` with the figure's other checks."""
    if "choices" in values and "prediction" not in values:
        raise ValueError(":choices: needs a :prediction: (the question the choices answer)")
    name = values.get("choices-check")
    if name is None:
        return
    if "choices" not in values:
        raise ValueError(":choices-check: needs :choices: (it confirms the choice marked correct)")
    key = "sweep-checks" if "sweep" in values else "checks"
    if name not in values.get(key, []):
        values[key] = [*values.get(key, []), name]
