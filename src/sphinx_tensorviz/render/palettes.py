"""256-step palettes of matplotlib colormaps as ``#rrggbb``, the way heatmaps colour their cells.

The default maps (and the other diverging one the docs recommend) ship as data in
``palettes.json``, written from matplotlib by ``python -m sphinx_tensorviz.render.palettes``
(a test checks they still equal matplotlib's). So drawing a heatmap with them does not import
matplotlib (a third of a second of every fresh build); any other colormap is taken from
matplotlib, whole, in one vectorised call.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

SHIPPED = Path(__file__).with_name("palettes.json")
#: The colormaps kept in ``palettes.json``.
SHIPPED_NAMES = ("RdBu_r", "viridis", "BrBG")


@cache
def palette(colormap: str) -> tuple[str, ...]:
    """The 256 colours of ``colormap``: entry ``i`` is the colour at ``i / 255``."""
    shipped = _shipped()
    if colormap in shipped:
        return tuple(shipped[colormap])
    return from_matplotlib(colormap)


@cache
def _shipped() -> dict[str, list[str]]:
    try:
        return json.loads(SHIPPED.read_text("utf-8"))
    except (OSError, ValueError):  # a damaged install still draws, through matplotlib
        return {}


def from_matplotlib(colormap: str) -> tuple[str, ...]:
    """Ask matplotlib: integer indices pick the lookup table's entries exactly (a float ``i / 255``
    lands on the same entry)."""
    import matplotlib
    import numpy as np
    from matplotlib.colors import to_hex

    return tuple(to_hex(rgba) for rgba in matplotlib.colormaps[colormap].resampled(256)(np.arange(256)))


if __name__ == "__main__":
    SHIPPED.write_text(json.dumps({name: list(from_matplotlib(name)) for name in SHIPPED_NAMES}) + "\n", "utf-8")
    print(f"wrote {SHIPPED}")
