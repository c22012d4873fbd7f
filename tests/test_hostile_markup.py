"""Issue 13, the smaller items: right-to-left overrides in labels are isolated, and the refusal of a
``:diagram:`` outside the project names what to fix without calling it lesson code.

One real build: a heatmap whose lesson code returns labels and prints text holding U+202E
(RIGHT-TO-LEFT OVERRIDE), an authored diagram with such a label, and a ``:diagram:`` path that
leaves the project.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docutils import nodes

from conftest import Build, run_sphinx
from hostile_util import assert_store_valid, located, make_project, nothing_left_behind
from sphinx_tensorviz.render.bidi import FSI, PDI, isolate, isolate_text_nodes
from sphinx_tensorviz.render.svg import text as svg_text

RLO = "\u202e"

LABELS = '''\
# Labels

```{tv-heatmap}
:title: Labels

import numpy as np

print("printed \\u202e reversed")
result = {"values": np.eye(2), "rows": ["fine", "evil\\u202egnp.exe"], "columns": ["a\\u202eb", "c"]}
```

```{tv-graph}
:title: Diagram
title: Diagram
reading: Two boxes.
panel:
  kind: graph
  width: 4
  height: 3
  nodes:
    - {id: a, x: 2, y: 0.7, w: 1.5, h: 0.7, tone: data, label: "box \\u202e a"}
    - {id: b, x: 2, y: 2.2, w: 1.5, h: 0.7, tone: result, label: "b"}
  edges:
    - {from: a, to: b}
```
'''

OUTSIDE = "# Outside\n\n```{tv-graph}\n:diagram: ../elsewhere.yaml\n```\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    root = tmp_path_factory.mktemp("markup")
    (root / "elsewhere.yaml").write_text("title: x\n", "utf-8")
    src = make_project(root / "src", {"labels": LABELS, "outside": OUTSIDE})
    return src, run_sphinx(src)


def _unisolated(page: str) -> list[str]:
    """Each U+202E in ``page`` that is not inside a FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE."""
    inside = re.sub(f"{FSI}[^{FSI}{PDI}]*{PDI}", "", page)
    return [inside[max(0, m.start() - 40):m.end() + 40] for m in re.finditer(RLO, inside)]


@pytest.mark.sphinx
def test_overrides_from_lesson_code_and_diagrams_are_isolated(built: tuple[Path, Build]) -> None:
    src, build = built
    assert build.statuscode == 0, build.warnings
    page = build.html("labels")
    assert page.count(RLO) >= 5  # row and column labels in the SVG and the table, printed output, the diagram
    assert not _unisolated(page), _unisolated(page)
    assert f"{FSI}evil{RLO}gnp.exe{PDI}" in page
    assert f"{FSI}box {RLO} a{PDI}" in page
    assert "unicode-bidi: isolate" in (build.outdir / "_static" / "tensorviz" / "tensorviz.css").read_text("utf-8")
    assert_store_valid(src)
    nothing_left_behind()


@pytest.mark.sphinx
def test_a_diagram_outside_the_project_is_refused_without_saying_lesson_code(built: tuple[Path, Build]) -> None:
    src, build = built
    record = located(build, src, "outside", "source", "outside the course folder",
                     "keep the files a directive reads inside it", directive="tv-graph")
    assert "lesson code" not in record


def test_isolation_leaves_plain_text_alone_and_cannot_be_closed_early() -> None:
    assert isolate("plain label") == "plain label"
    assert svg_text("a < b") == "a &lt; b"
    hostile = f"x{PDI}{RLO}y"  # a PDI inside would close the wrapper early: it is dropped
    assert isolate(hostile) == f"{FSI}x{RLO}y{PDI}"
    tree = nodes.paragraph("", "", nodes.Text(f"a{RLO}b"), nodes.strong("", f"c{RLO}"))
    isolate_text_nodes(tree)
    assert tree.astext() == f"{FSI}a{RLO}b{PDI}{FSI}c{RLO}{PDI}"
