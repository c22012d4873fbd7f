"""LaTeX output: nodes that include a figure's PDF (drawn by :mod:`.pdf`) with ``\\includegraphics``."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.latex import LaTeXTranslator


class tv_latex_graphic(nodes.General, nodes.Element):  # noqa: N801
    """A PDF in the LaTeX output folder; attribute ``filename``."""


def _visit(self: LaTeXTranslator, node: nodes.Element) -> None:
    self.body.append(
        "\n\\begin{center}\n\\includegraphics[width=0.85\\linewidth,keepaspectratio]{%s}\n\\end{center}\n"
        % node["filename"]
    )
    raise nodes.SkipNode


class tv_latex_grid(nodes.General, nodes.Element):  # noqa: N801
    """PDFs side by side, three to a row, each with its caption: ``filenames``, ``captions``."""


GRID_COLUMNS = 3


def _visit_grid(self: LaTeXTranslator, node: nodes.Element) -> None:
    cells = [
        r"\begin{minipage}[t]{0.31\linewidth}\centering\includegraphics[width=\linewidth,keepaspectratio]{%s}"
        r"\\{\small %s}\end{minipage}" % (name, self.encode(caption))
        for name, caption in zip(node["filenames"], node["captions"])
    ]
    rows = [" & ".join(cells[k:k + GRID_COLUMNS]) for k in range(0, len(cells), GRID_COLUMNS)]
    columns = min(GRID_COLUMNS, len(cells))
    self.body.append("\n\\begin{center}\\begin{tabular}{%s}\n%s\n\\end{tabular}\\end{center}\n"
                     % ("c" * columns, " \\\\[1ex]\n".join(rows)))
    raise nodes.SkipNode


STYLE = Path(__file__).resolve().parent.parent / "latex" / "sphinxtensorviz.sty"


def copy_style(app: Sphinx) -> None:
    """Put the package next to the .tex file, where latexmk finds it."""
    if app.builder.format == "latex":
        target = Path(app.builder.outdir) / STYLE.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(STYLE.read_bytes())


def setup_latex_nodes(app: Sphinx) -> None:
    app.add_node(tv_latex_graphic, latex=(_visit, None))
    app.add_node(tv_latex_grid, latex=(_visit_grid, None))
    app.add_latex_package("sphinxtensorviz")
    app.connect("builder-inited", copy_style)
