"""``:sweep:`` and ``:sweep-checks:``: one executed figure per parameter value.

A sweep is read into a :class:`Sweep`: one ordinary :class:`ExecutionRequest` per point
(the point's value merged into ``:inputs:``, so each point has its own content hash and
artifact, and adding a value executes exactly one new job), plus, when the author names
cross-sweep checks, one small ``tv-sweep-check`` request whose content hash is the hash of
the point hashes and the check code: it re-runs whenever any point changes.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import Any

from ..core.hashing import canonical_json
from ..core.request import ExecutionRequest
from ..core.sweep import SWEEP_CHECK, SWEEP_CHECK_KIND, Sweep, SweepPoint
from . import options as opt
from .trained import at_snapshot

#: The most points one sweep may have (the product of its parameters' value counts). Every point
#: is an execution and an inline SVG on the page, so a larger sweep would make a heavy page.
MAX_POINTS = 50
#: At most this many swept parameters (a slider each).
MAX_PARAMETERS = 2

#: ``name:`` opening a YAML block mapping (the ``name=[...]`` form has no colon there)
_YAML_KEY = re.compile(r"[A-Za-z_]\w*\s*:")
_PARAMETER = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*(\[[^\]]*\])\s*[,;]?")


def sweep_option(argument: str | None) -> dict[str, list[Any]]:
    """``name=[v1, v2, ...]`` (one or two, separated by ``;`` or ``,``) or a YAML mapping of lists
    (``{name: [v1, v2]}``, or a block mapping written under ``sweep:`` in MyST's front matter)."""
    text = (argument or "").strip()
    if not text:
        raise ValueError("give the values, e.g. temperature=[0.25, 0.5, 1, 2, 4]")
    if text.startswith("{") or _YAML_KEY.match(text):
        parsed = opt.yaml_mapping(text)
    else:
        parsed, position = {}, 0
        while position < len(text):
            match = _PARAMETER.match(text, position)
            if match is None:
                raise ValueError(f"cannot read {text[position:]!r}: write name=[value, value, ...]")
            name, values = match.group(1), opt.yaml_mapping(f"{{v: {match.group(2)}}}")["v"]
            if name in parsed:
                raise ValueError(f"{name!r} is swept twice")
            parsed[name] = values
            position = match.end()
    return _checked(parsed)


def _checked(parsed: dict[str, Any]) -> dict[str, list[Any]]:
    if not 1 <= len(parsed) <= MAX_PARAMETERS:
        raise ValueError(f"sweep one or {MAX_PARAMETERS} parameters, not {len(parsed)}")
    total = 1
    for name, values in parsed.items():
        if not str(name).isidentifier():
            raise ValueError(f"{name!r} is not a Python parameter name")
        if not isinstance(values, list) or not values:
            raise ValueError(f"{name}: give a non-empty list of values, like {name}=[1, 2, 4]")
        if any(isinstance(v, (list, dict)) or v is None for v in values):
            raise ValueError(f"{name}: each value must be a number, a string or a boolean")
        if len({canonical_json(v) for v in values}) != len(values):
            raise ValueError(f"{name}: a value is listed twice")
        total *= len(values)
    if total > MAX_POINTS:
        raise ValueError(f"{total} points; a sweep may have at most {MAX_POINTS} (each point is an execution "
                         "and a figure on the page): sweep fewer values")
    return {str(k): v for k, v in parsed.items()}


def build_sweep(base: ExecutionRequest, parameters: dict[str, list[Any]],
                checks: list[str] | None, target: str = "inputs") -> Sweep:
    """One request per point, plus the check job. ``target``: where a point's values go, ``inputs``
    (the keyword arguments of a heatmap's function) or ``model_args`` (a graph model's arguments)."""
    given = (base.inputs if target == "inputs" else base.options.get(target)) or {}
    clash = sorted(set(parameters) & set(given))
    if clash:
        option = ":inputs:" if target == "inputs" else ":model-args:"
        raise ValueError(f"{', '.join(clash)} is also set in {option}; give each value in one place")
    names = list(parameters)

    def at(values: dict[str, Any]) -> ExecutionRequest:
        values, trained = at_snapshot(base.options, values)  # ``snapshot`` of a ``:model: @name`` figure
        if target == "inputs":
            return replace(base, inputs={**given, **values}, options={**base.options, **trained})
        return replace(base, options={**base.options, **trained, target: {**given, **values}})

    points = tuple(
        SweepPoint(dict(zip(names, combo)), at(dict(zip(names, combo))))
        for combo in itertools.product(*(parameters[n] for n in names))
    )
    check = None
    if checks:
        check = replace(
            base, directive=SWEEP_CHECK, render={}, runner=SWEEP_CHECK_KIND.run, hashed_extra={},
            inputs={"parameters": names,
                    "points": [[list(p.values.values()), p.request.content_hash] for p in points]},
            options={"checks": checks},
        )
    return Sweep(parameters, points, check)
