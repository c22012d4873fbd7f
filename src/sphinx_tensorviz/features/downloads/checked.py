"""The artifact fields a download is written from, checked before anything is written.

The lesson id and the environment (Python, framework and NumPy versions) are not part of the
content hash: a committed artifact, or one from a shared store, can hold anything there and
still be found by its hash. ``requirements.txt`` is read by ``pip``, for which a line like
``--extra-index-url https://...`` is an option, not a package; ``run.py`` is run by the reader.
So each field that reaches them must have the form of what it names (a version, a name), and an
artifact with any other value gets no downloads at all (:class:`RefusedDownload`). The schema
already fixes the others that do: the content hash (hex), the framework (an enum), dtypes (a
lower-case name) and checkpoint tokens (integers).
"""

from __future__ import annotations

import re
from typing import Any

from ...core.request import LESSON_ID

#: a version as installed packages record it (PEP 440, normalised), e.g. 2.4.6, 2.13.0+cpu, 0.5.0rc1.dev3
VERSION = re.compile(r"[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?",
                     re.ASCII | re.IGNORECASE)
#: Python's own version (``platform.python_version()``), e.g. 3.11.7, 3.14.0rc1, 3.13.0a1+
PYTHON_VERSION = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?((a|b|rc)[0-9]+)?\+?", re.ASCII)
#: the frameworks ``requirements.txt`` pins
FRAMEWORKS = ("numpy", "torch", "jax")


class RefusedDownload(ValueError):
    """A field that reaches a download does not have the form of what it names."""


def check_download_fields(artifact: dict[str, Any]) -> None:
    """Raise :class:`RefusedDownload`, naming the field, unless every field a download uses is well formed."""
    _expect("lessonId", artifact.get("lessonId"), LESSON_ID, "a lesson name (letters, digits, spaces, _.,+:()-)")
    environment = artifact.get("environment") or {}
    _expect("environment.python", environment.get("python"), PYTHON_VERSION, "a Python version")
    framework = environment.get("framework")
    if framework not in FRAMEWORKS:
        raise RefusedDownload(f"its environment.framework {framework!r} is not one of {', '.join(FRAMEWORKS)}")
    for package in dict.fromkeys((framework, "numpy")):
        if package in environment:
            _expect(f"environment.{package}", environment[package], VERSION, "a version")


def _expect(field: str, value: Any, form: re.Pattern[str], what: str) -> None:
    if not isinstance(value, str) or form.fullmatch(value) is None:
        raise RefusedDownload(f"its {field} {_shown(value)} is not {what}")


def _shown(value: Any) -> str:
    """The refused value, quoted and cut: it may be long, and hold newlines."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
