"""``tv-activations``: the recorded checkpoints of a ``tv-graph`` on the same page (by its ``:name:``).

Nothing runs for it: the checkpoints are recorded by the graph's own execution (its
``:checkpoints:``) and drawn from its artifact when the page is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ....core.i18n import TranslatableWords, render_texts
from ....read import options as opt
from ....read.directives import new_figure_id, problem_box
from ....warnings_ import Subtype


class tensorviz_activations(nodes.General, nodes.Element, TranslatableWords):  # noqa: N801
    """Attributes: ``graph``, ``render`` (title, prediction), ``figure_id``; children: the note."""

    def author_texts(self) -> Iterator[str]:
        return render_texts(self["render"])


class ActivationsDirective(SphinxDirective):
    """Recorded activations at the graph's ``:checkpoints:``; the body is a note for the reader."""

    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "graph": directives.unchanged_required,
        "title": opt.text,
        "prediction": opt.text,
    }

    def run(self) -> list[nodes.Node]:
        if "graph" not in self.options:
            return [problem_box(self, "name the tv-graph whose checkpoints to show with :graph:", Subtype.option)]
        node = tensorviz_activations(
            graph=nodes.fully_normalize_name(self.options["graph"]),
            render={k: self.options[k] for k in ("title", "prediction") if k in self.options},
            figure_id=new_figure_id(self),
        )
        self.set_source_info(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]
