"""``tv-heatmap``: the directive that describes a 2-D computation (nothing runs while reading)."""

from __future__ import annotations

from typing import Any, ClassVar

from docutils.parsers.rst import directives

from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.sweep import sweep_option
from . import KIND


class HeatmapDirective(ExecutedDirective):
    """``tv-heatmap``: a 2-D array from lesson code, drawn as an accessible heatmap."""

    kind = KIND
    author_options = ("unit",)
    extra_options: ClassVar[dict[str, Converter]] = {
        "rows": opt.labels,
        "columns": opt.labels,
        "unit": opt.text,
        "diverging": directives.flag,
        "colormap": opt.colormap,
        "checks": opt.name_list,
        "sweep": sweep_option,
        "sweep-checks": opt.name_list,
    }
    result_options = ("rows", "columns", "unit", "diverging", "checks")
    render_options = (*ExecutedDirective.render_options, "colormap")

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result = {
            "rows": values.get("rows"),
            "columns": values.get("columns"),
            "unit": values.get("unit", ""),
            "diverging": "diverging" in values,
        }
        if values.get("checks"):  # only when given, so figures without checks keep their hash
            result["checks"] = values["checks"]
        return result
