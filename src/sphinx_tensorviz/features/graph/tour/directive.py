"""``tv-steps`` and ``tv-step``: a guided tour of a ``tv-graph`` on the same page (by its ``:name:``).

Nothing runs for a tour: it is drawn from the graph's artifact when the page is written.
"""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ....core.i18n import TranslatableWords
from ....read import options as opt
from ....read.directives import figure_slug, new_figure_id, problem_box
from ....warnings_ import Subtype


class tensorviz_steps(nodes.General, nodes.Element, TranslatableWords):  # noqa: N801
    """Attributes: ``graph`` (name), ``opening`` (step id), ``steps_id``, ``title`` (the author's, or
    empty); children: steps."""

    def author_texts(self) -> list[str]:
        return [self["title"]] if self["title"] else []


class tensorviz_step(nodes.General, nodes.Element, TranslatableWords):  # noqa: N801
    """Attributes: ``step``, ``target``, ``title``; children: the parsed note (translated as prose)."""

    def author_texts(self) -> list[str]:
        return [self["title"]]


def _located_problem(directive: SphinxDirective, message: str) -> list[nodes.Node]:
    return [problem_box(directive, message, Subtype.option)]


class StepsDirective(SphinxDirective):
    """An ordered tour; each ``tv-step`` inside names a graph node as its ``:target:``."""

    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "graph": directives.unchanged_required,
        "opening": directives.unchanged_required,
        "title": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        if "graph" not in self.options:
            return _located_problem(self, "name the tv-graph to tour with :graph: (the graph's :name:)")
        node = tensorviz_steps(
            graph=nodes.fully_normalize_name(self.options["graph"]),
            opening=self.options.get("opening", ""),
            title=self.options.get("title", ""),  # empty: the extension's "Guided tour", in the build's language
            steps_id=new_figure_id(self, "steps"),
        )
        self.set_source_info(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        steps = [child for child in node.children if isinstance(child, tensorviz_step)]
        if not steps:
            return _located_problem(self, "write at least one tv-step inside tv-steps")
        ids = [s["step"] for s in steps]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            return _located_problem(self, f"step ids must be unique; repeated: {', '.join(repeated)}")
        opening = figure_slug(node["opening"]) if node["opening"] else ids[0]
        if opening not in ids:
            return _located_problem(self, f":opening: {node['opening']!r} is not one of the steps {ids}")
        node["opening"] = opening
        return [node]


class StepDirective(SphinxDirective):
    """One step: ``{tv-step} step-id`` with ``:target:`` and ``:title:``; the body is the note (MyST)."""

    has_content = True
    required_arguments = 1
    option_spec: ClassVar[dict[str, Any]] = {
        "target": directives.unchanged_required,
        "title": opt.text,
    }

    def run(self) -> list[nodes.Node]:
        step_id = self.arguments[0].strip()
        if "target" not in self.options or "title" not in self.options:
            return _located_problem(self, f"step {step_id!r} needs :target: (a graph node id) and :title:")
        node = tensorviz_step(step=figure_slug(step_id), target=self.options["target"].strip(),
                              title=self.options["title"])
        self.set_source_info(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]
