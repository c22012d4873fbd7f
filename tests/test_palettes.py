"""The shipped colour palettes are matplotlib's, exactly (they only spare the import)."""

from __future__ import annotations

import json

import matplotlib
import pytest
from matplotlib.colors import to_hex

from sphinx_tensorviz.render.colors import make_scale
from sphinx_tensorviz.render.palettes import SHIPPED, SHIPPED_NAMES, from_matplotlib, palette


@pytest.mark.parametrize("name", SHIPPED_NAMES)
def test_shipped_palette_equals_matplotlibs(name: str) -> None:
    shipped = json.loads(SHIPPED.read_text("utf-8"))[name]
    assert shipped == [to_hex(matplotlib.colormaps[name](i / 255)) for i in range(256)], (
        f"regenerate with: python -m sphinx_tensorviz.render.palettes ({name} changed in matplotlib)")


@pytest.mark.parametrize("name", ["magma", "coolwarm", "tab10", "PuOr"])
def test_other_colormaps_come_from_matplotlib_entry_by_entry(name: str) -> None:
    assert name not in SHIPPED_NAMES
    assert list(palette(name)) == [to_hex(matplotlib.colormaps[name](i / 255)) for i in range(256)]


def test_diverging_scale_is_centred_and_text_contrasts() -> None:
    scale = make_scale([[-2.0, 0.0, 1.0]], diverging=True, colormap=None)
    assert (scale.low, scale.high) == (-2.0, 2.0)
    assert scale.color(0.0) == palette("RdBu_r")[128]
    assert scale.text_color(-2.0) == "#ffffff" and scale.text_color(0.0) == "#000000"
    assert from_matplotlib("RdBu_r") == palette("RdBu_r")
