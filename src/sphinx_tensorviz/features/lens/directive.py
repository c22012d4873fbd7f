"""``tv-lens``: the directive that names a causal language model, its tokens, the target and, for a
model without the shared shape, its pieces (nothing runs while reading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ...core.words import plural
from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.lm_options import (
    add_function_files,
    course_function,
    function_reference,
    is_function_reference,
    take_model,
    token_inputs,
    token_labels,
)
from ...read.trained import model_option
from . import KIND

#: the most tokens a cell's table lists (``:top-k:``)
MAX_TOP_K = 20
#: options that name a piece of the model: a module path, or ``file.py:function``
PIECES = ("residual", "final-norm", "unembed")
#: options whose ``file.py:function`` is course code the figure depends on
FUNCTIONS = ("tokens", "vocabulary", "final-norm", "unembed")


def target_option(argument: str | None) -> int | list[int]:
    """A token id for every position (``7``), or one per position (``[3, 14, 7]``)."""
    value = opt.load_yaml((argument or "").strip())
    ids = value if isinstance(value, list) else [value]
    if not ids or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in ids):
        raise ValueError(f"give a token id (7) or a list of them ([3, 14, 7]); got {argument!r}")
    return value


def top_k(argument: str | None) -> int:
    value = opt.positive_int(argument)
    if value > MAX_TOP_K:
        raise ValueError(f"at most {plural(MAX_TOP_K, 'token')} per cell; got {value}")
    return value


def piece(argument: str | None) -> str:
    """A module path (``model.norm``, ``layers.{i}``) or ``file.py:function``."""
    text = (argument or "").strip()
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"give a module path like layers.{{i}} or file.py:function; got {text!r}")
    return text


class LensDirective(ExecutedDirective):
    """Run ``:model:`` once in a worker and read every block's residual stream out as a prediction."""

    kind = KIND
    extra_options: ClassVar[dict[str, Converter]] = {
        "model": model_option,
        "model-args": opt.yaml_mapping,
        "inputs": token_inputs,
        "call-args": opt.yaml_mapping,
        "tokens": token_labels,
        "vocabulary": function_reference,
        "target": target_option,
        "top-k": top_k,
        "residual": piece,
        "final-norm": piece,
        "unembed": piece,
        "checks": opt.name_list,
    }

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        take_model(self, values)
        inputs = values.get("inputs")
        if not (isinstance(inputs, list) and inputs and all(isinstance(n, int) for n in inputs)):
            raise ValueError(":inputs: gives the token ids, e.g. [5, 3, 9, 5, 3]")
        if values["backend"] == "jax" and not {"residual", "unembed"} <= set(values):
            raise ValueError("a JAX model names its pieces: :residual: (e.g. layers.{i}) and :unembed:")
        if "residual" in values and (is_function_reference(values["residual"]) or "{i}" not in values["residual"]):
            raise ValueError(":residual: is a module path with {i} for the layer, e.g. layers.{i}")
        for option in FUNCTIONS:
            if isinstance(values.get(option), str) and is_function_reference(values[option]):
                values[option] = course_function(self, values[option])
        if "checks" in values:  # a check in a file of its own: its path from the course folder
            values["checks"] = [course_function(self, name) if is_function_reference(name) else name
                                for name in values["checks"]]
        return values

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"model_args": values.get("model-args", {}), "inputs": values["inputs"]}
        # the rest only when given, so that adding an option later keeps these figures' hashes
        for option in ("call-args", "tokens", "vocabulary", "target", "top-k", *PIECES, "checks"):
            if option in values:
                result[option.replace("-", "_")] = values[option]
        return result

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """The model's code plus every ``file.py:function`` option's (and check's) file and what it
        imports, so that editing them re-runs."""
        entry, files, inline, importer = super().gather_code(values)
        given = [values[option] for option in FUNCTIONS if isinstance(values.get(option), str)]
        for reference in [*given, *values.get("checks", [])]:
            if is_function_reference(reference):
                add_function_files(self, files, reference)
        return entry, files, inline, importer
