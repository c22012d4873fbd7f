"""Numbers as the figures' words and tables write them: the same few significant digits everywhere.

Shared by every kind's alt text, descriptions, tables and axis labels, so a value reads the same in
the picture, the sentence and the data table.
"""

from __future__ import annotations


def fmt(value: float, digits: int = 4) -> str:
    """A compact number for text and tables (``digits`` significant digits, real minus sign)."""
    text = f"{value:.{digits}g}"
    return "0" if text in ("0", "-0") else text.replace("-", "\u2212")
