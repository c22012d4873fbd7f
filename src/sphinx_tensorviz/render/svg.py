"""Small helpers shared by the SVG writers: escaping and number formatting.

Numbers are written with a fixed precision so the same figure gives the same
bytes on every run.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

#: Replaced by the figure id when a cached SVG is placed on a page.
ID_TOKEN = "tvidtoken0"


def num(value: float) -> str:
    """Coordinates with one decimal, without a trailing ``.0``."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def text(value: str) -> str:
    return escape(value)


def attr(value: str) -> str:
    """A quoted, escaped attribute value (quotes included)."""
    return quoteattr(value)
