"""Directive option converters: small pure functions that raise ``ValueError`` with a reason.

Usable from reStructuredText and MyST alike; docutils turns the error into a
located option error.
"""

from __future__ import annotations

from typing import Any

from docutils.parsers.rst import directives

from ..core.hashing import canonical_json
from ..core.request import LESSON_ID

BACKENDS = ("jax", "torch", "numpy")


def backend(argument: str | None) -> str:
    return directives.choice((argument or "").strip().lower(), BACKENDS)


#: NumPy's global generator (seeded for every backend) takes seeds up to 2**32 - 1
MAX_SEED = 2**32 - 1


def seed(argument: str | None) -> int:
    """A seed every backend accepts: checked when the page is read, not found out by the worker."""
    value = directives.nonnegative_int(argument)
    if value > MAX_SEED:
        raise ValueError(f"{value} is above {MAX_SEED} (2**32 - 1), the largest seed NumPy accepts")
    return value


def yaml_mapping(argument: str | None) -> dict[str, Any]:
    """A YAML (or JSON) mapping, e.g. ``{"scale": 2, "tokens": [1, 2]}``."""
    value = _yaml(argument)
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping like {{name: value}}, got {type(value).__name__}")
    return _hashable(value)


def _hashable(value: Any) -> Any:
    """Values become part of the content hash: only plain JSON (no NaN, dates or YAML objects)."""
    try:
        canonical_json(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"use plain numbers, strings, lists and mappings (no NaN, infinity or dates): {exc}") from None
    return value


def labels(argument: str | None) -> str | list[str]:
    """Axis labels: a pattern with ``{i}`` (rows) or ``{j}`` (columns), or a YAML list (a flow
    list ``[a, b]``, or a block list of ``- a`` lines written under the key in MyST's front matter)."""
    text = (argument or "").strip()
    if not text:
        raise ValueError("give a pattern like 'token {i}' or a list like [a, b, c]")
    if _is_yaml_list(text):
        value = _yaml(text)
        if not isinstance(value, list):
            raise ValueError("a label list must look like [a, b, c]")
        return [str(v) for v in value]
    return text


def text(argument: str | None) -> str:
    """Free text; required to be non-empty so an empty ``:alt:`` is caught early."""
    value = " ".join((argument or "").split())
    if not value:
        raise ValueError("this option needs a value")
    return value


def lesson_name(argument: str | None) -> str:
    """A ``:lesson:`` id of the form a figure's downloads accept (checked here, where it is written)."""
    value = text(argument)
    if LESSON_ID.fullmatch(value) is None:
        raise ValueError(f"{value!r} is not a lesson name: use letters, digits, spaces and _.,+:()- "
                         "(at most 200, starting with a letter or digit)")
    return value


def colormap(argument: str | None) -> str:
    """A matplotlib colormap name (checked when the page is read, not when it is drawn)."""
    import matplotlib

    name = text(argument)
    if name not in matplotlib.colormaps:
        raise ValueError(f"{name!r} is not a matplotlib colormap; diverging data reads best with RdBu_r or BrBG")
    return name


def python_name(argument: str | None) -> str:
    value = (argument or "").strip()
    if not value.isidentifier():
        raise ValueError(f"{value!r} is not a Python function name")
    return value


class YamlProblem(ValueError):
    """Text that is not valid YAML (nor JSON, a subset); the message says where."""


def load_yaml(text: str) -> Any:
    """``text`` read as YAML, safely: only plain data, never Python objects.

    libyaml's parser (when PyYAML was built with it) reads a course's options several times faster
    than the pure-Python one; the same constructor makes the same values. Text libyaml refuses is
    read again by the pure-Python parser, which has the last word (as before there was a choice),
    and whose message quotes the line with a caret.
    """
    import yaml  # on first use: a build that reads no page needs no YAML

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # both loaders are safe ones
    except yaml.YAMLError:
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise YamlProblem(str(exc)) from None


def _yaml(argument: str | None) -> Any:
    try:
        return load_yaml(argument or "")
    except YamlProblem as exc:
        raise ValueError(f"not valid YAML/JSON: {exc}") from None


def _is_yaml_list(text: str) -> bool:
    """``[a, b]``, or ``- a`` lines (a block list written under the key in MyST's front matter)."""
    return text.startswith("[") or text == "-" or text.startswith(("- ", "-\n"))


def _yaml_names(text: str) -> list[str]:
    """The items of a YAML list of names, as written (``[embedding, block.ffn]``; YAML's base loader
    keeps every item text, so a tag ``No`` or a module ``0`` stays what it says)."""
    import yaml

    try:
        value = yaml.load(text, Loader=yaml.BaseLoader)  # noqa: S506 - builds only strings, lists and dicts
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML/JSON: {exc}") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("a list of names looks like [embedding, block.ffn]")
    return [str(v).strip() for v in value if str(v).strip()]


def name_list(argument: str | None) -> list[str]:
    """A comma- or space-separated list of ids, e.g. ``embedding, block.ffn``, or a YAML list of them."""
    text = (argument or "").strip()
    if _is_yaml_list(text):
        items = [part for item in _yaml_names(text) for part in item.replace(",", " ").split()]
    else:
        items = [item for item in text.replace(",", " ").split() if item]
    if text.startswith("{") or any(item.endswith(":") for item in items):  # no name ends with ':' (``shared:1``)
        raise ValueError("a list of names looks like [embedding, block.ffn] or embedding, block.ffn, not a mapping")
    if not items:
        raise ValueError("give at least one name")
    return items


def model_reference(argument: str | None) -> tuple[str, str]:
    """``path/to/file.py:Name`` -> (path, Name)."""
    text = (argument or "").strip()
    path, sep, name = text.rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        raise ValueError(f"{text!r} should look like models/tiny_llama.py:TinyLlama")
    return path, name


def input_specs(argument: str | None) -> list[dict[str, Any]]:
    """A YAML list of input specs: ``[{shape: [1, 6], dtype: int64, fill: ones}]``.

    A spec may carry a ``name`` to be passed as that keyword argument; a mapping of names to
    specs (``{input_ids: {shape: [1, 6], dtype: int64}}``) is the same list, in its order.
    """
    value = _yaml(argument)
    if isinstance(value, dict) and "shape" not in value and value and all(isinstance(v, dict) for v in value.values()):
        value = [{"name": str(name), **spec} for name, spec in value.items()]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, dict) and "shape" in v for v in value):
        raise ValueError("expected a list like [{shape: [1, 6], dtype: int64, fill: ones}]")
    for spec in value:
        if "name" in spec and not (isinstance(spec["name"], str) and spec["name"].isidentifier()):
            raise ValueError(f"an input name must be a Python identifier like input_ids, got {spec['name']!r}")
        if not isinstance(spec["shape"], list) or not all(isinstance(n, int) and n >= 0 for n in spec["shape"]):
            raise ValueError(f"shape must be a list of non-negative integers, got {spec['shape']!r}")
    return _hashable(value)


def positive_int(argument: str | None) -> int:
    return directives.positive_int(argument)


def integer(argument: str | None) -> int:
    try:
        return int((argument or "").strip())
    except ValueError:
        raise ValueError(f"{argument!r} is not an integer") from None


def name_list_commas(argument: str | None) -> list[str]:
    """A comma-separated list whose items may contain spaces, e.g. ``Causal decoder, RoPE``, or a YAML list."""
    text = (argument or "").strip()
    items = _yaml_names(text) if _is_yaml_list(text) else [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError("give at least one item")
    return items
