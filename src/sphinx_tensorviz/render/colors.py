"""Colour scales for heatmaps, taken from matplotlib's colormaps.

Signed data gets a diverging map centred on zero (``RdBu_r`` by default: blue
below zero, red above, never red/green), so equal magnitudes get equal weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .palettes import palette

DIVERGING_DEFAULT = "RdBu_r"
SEQUENTIAL_DEFAULT = "viridis"


@dataclass(frozen=True)
class Scale:
    """Maps a value to a colour; ``low``/``high`` are the ends of the colour bar."""

    colormap: str
    low: float
    high: float
    diverging: bool

    def fraction(self, value: float) -> float:
        if self.high == self.low:
            return 0.5
        return min(1.0, max(0.0, (value - self.low) / (self.high - self.low)))

    def color(self, value: float) -> str:
        return hex_at(self.colormap, round(self.fraction(value) * 255))

    def text_color(self, value: float) -> str:
        """Black or white, whichever contrasts more with the cell (WCAG relative luminance)."""
        return _text_on(self.color(value))


def make_scale(values: list[list[float]], diverging: bool, colormap: str | None) -> Scale:
    flat = [v for row in values for v in row]
    if diverging:
        limit = max(abs(v) for v in flat) or 1.0
        return Scale(colormap or DIVERGING_DEFAULT, -limit, limit, True)
    return Scale(colormap or SEQUENTIAL_DEFAULT, min(flat), max(flat), False)


def hex_at(colormap: str, index: int) -> str:
    """The colour at ``index`` (0..255) of a matplotlib colormap, as ``#rrggbb``."""
    return palette(colormap)[index]


@cache
def _text_on(background: str) -> str:
    red, green, blue = (int(background[i : i + 2], 16) / 255 for i in (1, 3, 5))
    lum = 0.2126 * _linear(red) + 0.7152 * _linear(green) + 0.0722 * _linear(blue)
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def _linear(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4
