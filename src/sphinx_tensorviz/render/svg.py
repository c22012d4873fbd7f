"""Small helpers shared by the SVG writer and hand-written page markup: escaping and number formatting.

Numbers are written with a fixed precision so the same figure gives the same
bytes on every run.
"""

from __future__ import annotations

import re

from .bidi import is_isolated, isolate

#: Replaced by the figure id when a cached SVG is placed on a page.
ID_TOKEN = "tvidtoken0"


def num(value: float) -> str:
    """Coordinates with one decimal, without a trailing ``.0``."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
#: Anything :func:`clean` might change: characters XML cannot carry and directional controls.
_SUSPECT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def coord(value: float) -> str:
    """One decimal always (``-0.0`` written as ``0.0``): output must not depend on repr quirks."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def printable(value: object) -> str:
    """``value`` without the characters XML cannot carry (NUL, most C0 controls, U+FFFE/U+FFFF)."""
    return _BAD_XML.sub("", str(value))


def clean(value: object) -> str:
    """``value`` as text that XML can carry: characters it cannot are dropped and directional
    overrides isolated (lesson text is untrusted). Escaping is the serialiser's job.

    Cleaning twice changes nothing, so a figure may clean the untrusted part of a composed value
    (``tv-tone-<tone>``) and the writer cleans the whole again."""
    text = value if type(value) is str else str(value)
    if _SUSPECT.search(text) is None:  # nearly every label: one scan, no copy
        return text
    cleaned = printable(text)
    return cleaned if is_isolated(cleaned) else isolate(cleaned)


def text(value: object) -> str:
    """Escape character data, dropping characters XML cannot carry and isolating directional
    overrides (lesson text is untrusted)."""
    cleaned = isolate(printable(value))
    return cleaned.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def attr_value(value: object) -> str:
    """Escape a value for a double-quoted attribute (the quotes are not included)."""
    return text(value).replace('"', "&quot;").replace("'", "&#39;").replace("\n", "&#10;")


def attr(value: object) -> str:
    """A double-quoted, escaped attribute value (quotes included)."""
    return f'"{attr_value(value)}"'
