"""A configuration value declared once: name, types, default, validator, help and where it goes.

Why: a value used to be named in five places (the registration table, the ``Settings`` fields, the
function that read them, hand-written checks and the reference page), and they drifted. Now a
:class:`ConfigValue` is the only place; ``config.py`` registers and checks every declaration the
same way, builds ``Settings`` from them, and the manual's reference page is generated from them.
It lives in ``core/`` so that a figure kind can declare its own values in its feature package.

A validator is any callable that returns why a value is unusable (a phrase completing
"``NAME = VALUE`` ...", e.g. ``"must be True or False"``), or ``None`` when it is usable. The
factories below cover the usual kinds; their :class:`Check` also says what is accepted, for the
reference page.
"""

from __future__ import annotations

import ast
import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: returns why a value is unusable, or None
Validator = Callable[[Any], str | None]


@dataclass(frozen=True)
class Check:
    """A validator made of a test and the reason given when the test fails."""

    accepts: Callable[[Any], bool]
    reason: str  #: e.g. "must be an integer of at least 1"

    def __call__(self, value: Any) -> str | None:
        return None if self.accepts(value) else self.reason


def choice(*options: Any) -> Check:
    """One of ``options`` (compared with ``==``)."""
    return Check(lambda value: value in options, "must be one of " + ", ".join(repr(o) for o in options))


def _is_number(value: Any) -> bool:
    # True is an int to Python, but never a size or a count in a conf.py
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def at_least(smallest: float, *, integer: bool = False) -> Check:
    """A number (an ``int`` if ``integer``) no smaller than ``smallest``."""
    if not integer:
        return Check(lambda v: _is_number(v) and v >= smallest, f"must be a number of at least {smallest:g}")
    reason = "must be a non-negative integer" if smallest == 0 else f"must be an integer of at least {smallest:g}"
    return Check(lambda v: _is_number(v) and isinstance(v, int) and v >= smallest, reason)


def positive(unit: str) -> Check:
    """A number above zero, counted in ``unit`` (said in the reason)."""
    return Check(lambda v: _is_number(v) and v > 0, f"must be a positive number of {unit}")


boolean = Check(lambda value: isinstance(value, bool), "must be True or False")
text = Check(lambda value: isinstance(value, str), "must be a string")
path = Check(lambda value: isinstance(value, (str, os.PathLike)), "must be a path (a string)")


@dataclass(frozen=True)
class ConfigValue:
    """One ``tensorviz_*`` configuration value, as Sphinx registers it and the manual documents it."""

    name: str
    default: Any
    types: tuple[type, ...]
    #: MyST text for the reference page; its first paragraph is the short description Sphinx keeps
    help: str = field(repr=False)
    #: why a value is unusable (then it is replaced by the default), or None; no check: anything goes
    check: Validator | None = None
    #: what Sphinx rebuilds when the value changes ("env", "html", "" for nothing)
    rebuild: str = "env"
    #: the ``Settings`` attribute that holds it (package values only), or None
    setting: str | None = None
    #: turns the checked value into the ``Settings`` attribute (e.g. ``float`` for a timeout given as 30)
    convert: Callable[[Any], Any] | None = None
    #: the section of the reference page that documents it
    topic: str = "execution"

    def __post_init__(self) -> None:
        # help is written as an indented triple-quoted string beside the declaration
        object.__setattr__(self, "help", inspect.cleandoc(self.help))

    def problem(self, value: Any) -> str | None:
        """Why ``value`` cannot be used for this setting, or ``None``."""
        return self.check(value) if self.check is not None else None

    def as_setting(self, value: Any) -> Any:
        """The checked ``value`` as its ``Settings`` attribute holds it."""
        return self.convert(value) if self.convert is not None else value

    @property
    def summary(self) -> str:
        """The help's first paragraph on one line."""
        return " ".join(self.help.strip().split("\n\n", 1)[0].split())

    @property
    def accepted(self) -> str | None:
        """What the check accepts, in words ("an integer of at least 1"), where the check says."""
        reason = getattr(self.check, "reason", None)
        return reason.removeprefix("must be ") if isinstance(reason, str) else None


def assignment_line(conf_py: Path, name: str) -> int | None:
    """The line of ``conf_py`` where ``name`` is last assigned, so a warning about its value can
    point there; ``None`` when the file cannot be read or does not assign it plainly."""
    try:
        tree = ast.parse(conf_py.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    lines = [node.lineno for node in ast.walk(tree)
             if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             and any(isinstance(t, ast.Name) and t.id == name
                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    return max(lines, default=None)
