"""Counts written as words: ``1 head``, ``2 heads``.

Every count the extension writes for a reader (labels, summaries, alt text, messages) goes
through :func:`plural`, so none reads "1 heads".
"""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, in the plural unless ``count`` is one (``many`` for irregular
    plurals: ``plural(2, "axis", "axes")``)."""
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"
