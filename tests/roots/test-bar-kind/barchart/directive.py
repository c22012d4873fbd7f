"""``tv-bar``: the directive describes the computation; nothing runs while reading."""

from __future__ import annotations

from typing import ClassVar

from sphinx_tensorviz.read import options as opt
from sphinx_tensorviz.read.directives import Converter, ExecutedDirective

from . import KIND


class BarDirective(ExecutedDirective):
    """A 1-D array from lesson code, one labelled bar per value."""

    kind = KIND
    extra_options: ClassVar[dict[str, Converter]] = {"labels": opt.labels, "unit": opt.text}
    result_options = ("labels", "unit")  # hashed with the code: they are stored in the artifact
