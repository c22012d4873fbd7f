"""A bar artifact as :class:`FigureParts`: the drawing (SVG on the page, PDF for LaTeX, through the
package's writers), alt text made from the data, and a data table for every builder."""

from __future__ import annotations

from typing import Any

from sphinx_tensorviz.render.cache import artifact_key
from sphinx_tensorviz.render.mpl_writer import save_pdf
from sphinx_tensorviz.render.numbers import fmt
from sphinx_tensorviz.render.parts import FigureParts
from sphinx_tensorviz.render.svg_writer import write
from sphinx_tensorviz.render.tables import data_table

from .drawing import bar_drawing


def bar_alt(data: dict[str, Any]) -> str:
    values, labels = data["values"], data["labels"]
    top = max(range(len(values)), key=values.__getitem__)
    return (f"Bar chart of {len(values)} bars{' of ' + data['unit'] if data['unit'] else ''}; "
            f"the tallest is {labels[top]} at {fmt(values[top])}.")


def bar_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    title = render.get("title") or "Bar chart"
    alt = render.get("alt") or bar_alt(data)
    svg = ctx.cache.svg(artifact_key(artifact), renderer_hash, lambda: write(bar_drawing(data, title, alt)))
    table = data_table(f"Data: {data['unit'] or 'values'}", "bar", data["labels"], [data["unit"] or "value"],
                       [[fmt(v)] for v in data["values"]])
    return FigureParts(title=title, alt=alt, svg=svg, details=[table],
                       draw_pdf=lambda path: save_pdf(bar_drawing(data, title, ""), path, heading=True))
