"""``tv-patch``: the directive that names a model, the clean and corrupted token ids, the metric and
what to patch (nothing runs while reading)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ...core.words import plural
from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.lm_options import add_function_files, course_function, take_model, token_id_list, token_labels
from ...read.trained import model_option
from . import KIND
from .metric import BUILT_IN, metric_option

#: what ``:patch:`` may name (the worker's :data:`.patch_torch.SITES`, without importing it)
PATCHES = ("residual", "attn-out", "mlp-out", "heads")
#: options naming a model's pieces by module pattern (``blocks.{i}.attn.out``), for models the search misses
PART_OPTIONS = {"residual": "residual", "attention": "attention", "mlp": "mlp", "head-input": "head_input"}


def patch_option(argument: str | None) -> str:
    text = (argument or "").strip()
    if text not in PATCHES:
        raise ValueError(f"give one of {', '.join(PATCHES)}; got {text or 'nothing'}")
    return text


def module_pattern(argument: str | None) -> str:
    """A dotted module path with ``{i}`` for the layer: ``blocks.{i}.attn.out``."""
    text = (argument or "").strip()
    if not text or any(not (step.isidentifier() or step.isdigit() or step == "{i}") for step in text.split(".")):
        raise ValueError(f"give a dotted module path with {{i}} for the layer, like blocks.{{i}}.attn; got {text!r}")
    return text


class PatchDirective(ExecutedDirective):
    """Run ``:model:`` on the clean and the corrupted input, then patch every place, in a worker."""

    kind = KIND
    extra_options: ClassVar[dict[str, Converter]] = {
        "model": model_option,
        "model-args": opt.yaml_mapping,
        "clean": token_id_list,
        "corrupted": token_id_list,
        "metric": metric_option,
        "patch": patch_option,
        "call-args": opt.yaml_mapping,
        "tokens": token_labels,
        "checks": opt.name_list,
        **{option: module_pattern for option in PART_OPTIONS},
    }

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        take_model(self, values)
        for needed in ("clean", "corrupted", "metric"):
            if needed not in values:
                raise ValueError(f":{needed}: is needed: tv-patch compares a clean and a corrupted input "
                                 f"(token ids of the same length) by a metric ({BUILT_IN} A B, or file.py:function)")
        if len(values["clean"]) != len(values["corrupted"]):
            raise ValueError(f":clean: has {plural(len(values['clean']), 'token')} and :corrupted: "
                             f"{len(values['corrupted'])}: give inputs of the same length, so each position is "
                             "patched from its own")
        for option in ("tokens", "metric"):
            if isinstance(values.get(option), str) and not values[option].startswith(BUILT_IN):
                values[option] = course_function(self, values[option])
        if "checks" in values:  # a check in another course file: made relative to the course, and hashed
            values["checks"] = [course_function(self, name) if ".py:" in name else name for name in values["checks"]]
        return values

    @staticmethod
    def course_files(values: dict[str, Any]) -> list[str]:
        """The ``file.py:function`` references whose files are part of the figure's code."""
        given = [values[option] for option in ("tokens", "metric")
                 if isinstance(values.get(option), str) and not values[option].startswith(BUILT_IN)]
        return given + [name for name in values.get("checks", []) if ".py:" in name]

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"model_args": values.get("model-args", {}), "clean": values["clean"],
                                  "corrupted": values["corrupted"], "metric": values["metric"],
                                  "patch": values.get("patch", "residual")}
        for option, key in (("call-args", "call_args"), ("tokens", "tokens"), ("checks", "checks"),
                            *PART_OPTIONS.items()):
            if option in values:
                result[key] = values[option]
        return result

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """The model's code plus the ``:tokens:``, ``:metric:`` and checks' files, so editing them re-runs."""
        entry, files, inline, importer = super().gather_code(values)
        for reference in self.course_files(values):
            add_function_files(self, files, reference)
        return entry, files, inline, importer
