"""``tv-attention``: the directive that names a model, its tokens and the heads to draw (nothing runs
while reading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.lm_options import add_function_files, course_function, take_model, token_inputs, token_labels
from ...read.sweep import sweep_option
from ...read.trained import model_option
from . import KIND


def indices(argument: str | None) -> list[int]:
    """Layer or head numbers, counted from 0: ``0, 2`` or ``[0, 2]``."""
    names = opt.name_list(argument)
    if not all(name.isdigit() for name in names):
        raise ValueError(f"give numbers counted from 0, like 0, 2; got {', '.join(names)}")
    return sorted({int(name) for name in names})


class AttentionDirective(ExecutedDirective):
    """Run ``:model:`` once in a worker and draw every layer's and head's attention weights."""

    kind = KIND
    extra_options: ClassVar[dict[str, Converter]] = {
        "model": model_option,
        "model-args": opt.yaml_mapping,
        "inputs": token_inputs,
        "call-args": opt.yaml_mapping,
        "tokens": token_labels,
        "layers": indices,
        "heads": indices,
        "checks": opt.name_list,
        "sweep": sweep_option,
    }
    #: a swept value is a keyword of the model's factory (a size, a seed, a training snapshot)
    sweep_target = "model_args"

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        take_model(self, values)
        if "inputs" not in values:
            raise ValueError(":inputs: gives the token ids, e.g. [5, 3, 9, 5, 3] (or input specs)")
        if isinstance(values.get("tokens"), str):
            values["tokens"] = course_function(self, values["tokens"])
        return values

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"model_args": values.get("model-args", {}), "inputs": values["inputs"]}
        # the rest only when given, so that adding an option later keeps these figures' hashes
        for option, key in (("call-args", "call_args"), ("tokens", "tokens"), ("layers", "layers"),
                            ("heads", "heads"), ("checks", "checks")):
            if option in values:
                result[key] = values[option]
        return result

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """The model's code plus the ``:tokens:`` file and what it imports, so editing them re-runs."""
        entry, files, inline, importer = super().gather_code(values)
        if isinstance(values.get("tokens"), str):
            add_function_files(self, files, values["tokens"])
        return entry, files, inline, importer
