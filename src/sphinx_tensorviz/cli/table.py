"""Plain aligned text tables for the terminal."""

from __future__ import annotations

from collections.abc import Sequence


def printable(text: str) -> str:
    """``text`` with every character that is not printable written as its escape (``\\n``,
    ``\\u2028``, ``\\x1b``): the fields printed here come from artifacts and failure records, which a
    shared store or lesson code can fill, and must neither break a row nor reach the terminal as a
    control sequence (one that retitles the window or clears the screen)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded; each cell on one
    line, as :func:`printable` text."""
    cells_of = [[printable(str(c)) for c in row] for row in [header, *rows]]
    widths = [max(len(r[i]) for r in cells_of) for i in range(len(header))]
    lines = []
    for row in cells_of:
        cells = [c.ljust(w) for c, w in zip(row[:-1], widths[:-1])] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
