"""Verified claims: call the check functions a directive names and record what they found.

Runs in the worker, after the figure's computation: a heatmap's checks get its values, a
graph's checks the model, a cross-sweep check the table of every point's values.
"""

from __future__ import annotations

import importlib
import inspect
import math
import types
from pathlib import Path
from typing import Any

from ...core.protocol import Job
from .loader import BadResult, import_file


def code_name(job: Job) -> str:
    """How messages name the lesson's code: its file relative to the course, or the directive's body
    (whose page and line the warning carries already)."""
    return "the directive's code" if job.inline_code is not None else job.entry


def run_checks(module: types.ModuleType, names: list[str], model: Any,
               modules: dict[str, types.ModuleType] | None = None, code: str = "the model file",
               ) -> list[dict[str, Any]]:
    """Call each named check with the model; a check that raises counts as failed, with the reason.

    A name is a function of the lesson's module (or of ``modules[""]``, the ``:checks-source:``
    file), or ``where:function`` with ``where`` a key of ``modules`` (a project file or an
    importable module), so checks can live outside a model file that must stay untouched.
    ``code`` names the lesson's module in messages (:func:`code_name`). A check must answer with a
    boolean: ``"no"`` or ``0.3`` would pass by truthiness, so any other answer is a bad result.
    """
    results = []
    modules = modules or {}
    for name in names:
        where, _, function = name.rpartition(":")
        home = modules.get(where) if where else modules.get("", module)
        check = getattr(home, function, None) if home is not None else None
        if not callable(check):
            place = where or ("the :checks-source: file" if "" in modules else code)
            raise BadResult(f"no check function named {function!r} in {place}")
        doc = (inspect.getdoc(check) or function).splitlines()[0]
        try:
            outcome = check(model)
        except Exception as exc:  # noqa: BLE001 - a broken claim is reported as failed
            results.append({"name": name, "description": doc, "passed": False, "value": None,
                            "detail": f"{type(exc).__name__}: {exc}"})
            continue
        if not isinstance(outcome, dict):  # a bool, numpy.bool_ or 0-d tensor
            outcome = {"passed": outcome}
        _require_boolean(name, outcome.get("passed"))
        value = _number(outcome.get("value"))
        record = {
            "name": name,
            "description": str(outcome.get("description") or doc),
            "passed": bool(outcome.get("passed")),
            "value": value,
        }
        tolerance = _number(outcome.get("tolerance"))
        if tolerance is not None and value is not None:
            record["detail"] = f"measured {value:.3g}, tolerance {tolerance:.3g}"
        results.append(record)
    return results


def _require_boolean(name: str, passed: Any) -> None:
    """A Python bool, or a 0-d boolean array or tensor (``numpy.bool_``, ``(x > 0).all()``)."""
    zero_dimensional = getattr(passed, "shape", None) == ()
    if isinstance(passed, bool) or (zero_dimensional and "bool" in str(getattr(passed, "dtype", ""))):
        return
    shown = repr(passed)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise BadResult(f"check {name!r} returned {shown} ({type(passed).__name__}): a check returns True or False "
                    "(or a mapping whose 'passed' is True or False), e.g. bool(np.allclose(...))")


def _number(value: Any) -> float | None:
    """A finite float from a Python, NumPy or 0-d tensor number; ``None`` otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def check_modules(job: Job) -> dict[str, types.ModuleType]:
    """The modules that ``:checks:`` and ``:checks-source:`` name, loaded once each.

    Keys: ``""`` for the ``:checks-source:`` file, the ``path.py`` or dotted module name
    otherwise. Paths are relative to the course folder and were checked to be inside it
    when the page was read.
    """
    wanted = {name.rpartition(":")[0] for name in job.options.get("checks") or [] if ":" in name}
    loaded: dict[str, types.ModuleType] = {}
    if job.options.get("checks_source"):
        loaded[""] = _load(job.options["checks_source"], job)
    for where in sorted(wanted):
        loaded[where] = _load(where, job)
    return loaded


def _load(where: str, job: Job) -> types.ModuleType:
    if where.endswith(".py"):
        path = Path(job.srcdir or ".") / where
        try:
            return import_file(path, f"tensorviz_checks_{path.stem}")
        except BadResult:
            raise BadResult(f"cannot load checks from {where}") from None
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise BadResult(f"cannot import checks module {where!r}: {exc}") from None
