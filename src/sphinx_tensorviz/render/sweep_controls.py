"""The controls of a swept figure (a slider or a select per parameter) and where each point sits.

Shared by swept heatmaps (small multiples) and swept graphs (one figure per point): the page
script (``tensorviz-explore.js``) reads ``data-tv-sizes`` and ``data-tv-coords`` to show one
point at a time.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.sweep import Sweep, is_numeric, value_text
from . import svg


def sweep_sizes(sweep: Sweep) -> list[int]:
    return [len(values) for values in sweep.parameters.values()]


def controls_markup(sweep: Sweep) -> str:
    """One control per parameter, ``hidden`` until the script shows them; ids under ``ID_TOKEN``."""
    controls = [_control(f"{svg.ID_TOKEN}-sweep-{index}", name, values, index)
                for index, (name, values) in enumerate(sweep.parameters.items())]
    return '<div class="tv-sweep-controls" hidden="">' + "".join(controls) + "</div>"


def point_coords(number: int, sizes: list[int]) -> str:
    """The ``data-tv-coords`` of point ``number``: its index along each parameter."""
    return " ".join(map(str, _coords(number, sizes)))


def _coords(number: int, sizes: list[int]) -> list[int]:
    """The point's index along each parameter (row-major, like ``itertools.product``)."""
    coords = []
    for size in reversed(sizes):
        number, index = divmod(number, size)
        coords.append(index)
    return coords[::-1]


def _control(control_id: str, name: str, values: list[Any], index: int) -> str:
    """A range slider with a visible value for numbers; a select for names and booleans."""
    texts = [value_text(v) for v in values]
    label = f'<label for="{control_id}">{svg.text(name)}</label>'
    if is_numeric(values):
        return (f'<div class="tv-sweep-control">{label} '
                f'<input type="range" id="{control_id}" min="0" max="{len(values) - 1}" step="1" value="0" '
                f'data-tv-param="{index}" data-tv-values={svg.attr(json.dumps(texts))} '
                f'aria-valuetext={svg.attr(f"{name} = {texts[0]}")}> '
                f'<output for="{control_id}" class="tv-sweep-value" aria-live="polite">{svg.text(texts[0])}</output>'
                f'</div>')
    options = "".join(f'<option value="{k}">{svg.text(t)}</option>' for k, t in enumerate(texts))
    return (f'<div class="tv-sweep-control">{label} '
            f'<select id="{control_id}" data-tv-param="{index}">{options}</select></div>')
