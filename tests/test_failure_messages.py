"""What an author reads when a figure fails: the line of their own code that failed, first; no
folder of the build machine on the page or in the committed failure record; a YAML error's caret
diagram as YAML drew it.

One real Sphinx build of a small project: a PyTorch model file whose second ``Linear`` expects
other features than the first gives it (executed in a worker), and a heatmap whose ``:inputs:``
is broken YAML.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import sys
from pathlib import Path

import pytest

from conftest import Build, directive_lines, run_sphinx, store_dir

pytestmark = pytest.mark.sphinx

CONF = '''\
project = "failure messages"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 120
'''
MODEL = """\
import torch
from torch import nn


class Mismatch(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(4, 5)
        self.second = nn.Linear(4, 8)  # expects 4 features: the first gives it 5

    def forward(self, x):
        h = torch.relu(self.first(x))
        return self.second(h)
"""
GRAPH_PAGE = """\
# A model that cannot run

```{tv-graph}
:model: models/mlp.py:Mismatch
:inputs: [{shape: [2, 4]}]
```
"""
CRASH_PAGE = """\
# A model file that warns, then ends its process

```{tv-heatmap}
:source: models/crash.py
:function: compute
```
"""
CRASH = """\
import os
import sys
import warnings


def compute():
    warnings.warn("about to leave without a result")  # printed with this file's path
    sys.stderr.flush()
    os._exit(3)
"""
YAML_PAGE = """\
# Broken options

```{tv-heatmap}
:function: compute
:inputs: {n: [1, 2}

def compute(n):
    return [[1.0]]
```
"""


NESTED = """\
def outer(n):
    return middle(n)


def middle(n):
    return inner(n)


def inner(n):
    raise ValueError(f"n must be even,\\nbut it is {n}\\n(see the lesson's first paragraph)")
"""
NESTED_PAGE = """\
# Nested

```{tv-heatmap}
:source: models/nested.py
:function: outer
:inputs: {n: 3}
```
"""


@pytest.fixture(scope="module")
def failed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    pytest.importorskip("torch")
    src = tmp_path_factory.mktemp("messages") / "src"
    files = {"conf.py": CONF, "index.md": "# Course\n\n```{toctree}\nmodel\ncrash\nyaml\nnested\n```\n",
             "model.md": GRAPH_PAGE, "crash.md": CRASH_PAGE, "yaml.md": YAML_PAGE, "models/mlp.py": MODEL,
             "models/crash.py": CRASH, "nested.md": NESTED_PAGE, "models/nested.py": NESTED}
    for name, text in files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, "utf-8")
    return src, run_sphinx(src)


def record_of(built: Build, src: Path, page: str, directive: str) -> str:
    (line,) = directive_lines(src / f"{page}.md", directive)
    records = [r for r in built.tensorviz_warnings() if r.startswith(f"{src / page}.md:")]
    assert len(records) == 1, built.warnings
    assert records[0].startswith(f"{src / page}.md:{line}: WARNING: {directive}: "), records[0]
    return records[0]


def model_line(text: str) -> int:
    """The line of ``models/mlp.py`` that calls the mismatched layer (found in the file, not assumed)."""
    return next(n for n, line in enumerate(MODEL.splitlines(), 1) if text in line)


def literal_blocks(html: str, css_class: str) -> list[str]:
    found = re.findall(rf'<div class="[^"]*\b{css_class}\b[^"]*">.*?<pre>(.*?)</pre>', html, re.S)
    return [html_lib.unescape(re.sub(r"<[^>]+>", "", block)) for block in found]


def test_a_torch_shape_error_names_the_author_s_line_first(failed: tuple[Path, Build]) -> None:
    """``mat1 and mat2 shapes cannot be multiplied`` is raised in torch's ``linear.py``: the warning
    names ``models/mlp.py:LINE`` (the innermost author frame), and the traceback lists the author's
    frames before one line for the folded library frames."""
    src, built = failed
    record = record_of(built, src, "model", "tv-graph")
    assert record.rstrip().endswith("[tensorviz.execution]")
    line = model_line("return self.second(h)")
    assert f"lesson code failed: models/mlp.py:{line} in forward(): RuntimeError: mat1 and mat2 shapes cannot " \
           "be multiplied (2x5 and 4x8)" in record
    traceback = record.split("\n", 1)[1]
    author = traceback.index(f'File "models/mlp.py", line {line}, in forward')
    folded = traceback.index("library frames folded; innermost: torch/nn/modules/linear.py")
    assert author < folded < traceback.index("RuntimeError: mat1 and mat2")
    assert 'File "' not in traceback[folded:], "library frames are folded into one line, after the author's"
    html = built.html("model")
    (shown,) = literal_blocks(html, "tv-traceback")
    assert shown.index(f'File "models/mlp.py", line {line}, in forward') < shown.index("library frames folded")
    assert f"This figure could not be computed: models/mlp.py:{line} in forward():" in html_lib.unescape(html)


def test_no_folder_of_the_build_machine_on_the_page_or_in_the_record(failed: tuple[Path, Build]) -> None:
    """Error boxes are published and failure records committed: the lesson's traceback, and what a
    crashed worker wrote (a warning names the file it came from), name the project's files relatively."""
    src, built = failed
    records = {json.loads(p.read_text("utf-8"))["subtype"]: json.loads(p.read_text("utf-8"))
               for p in (store_dir(src) / "failures").glob("*.json")}
    assert set(records) == {"execution", "crash"}
    assert "models/mlp.py" in records["execution"]["traceback"]
    assert "models/crash.py:7: UserWarning: about to leave without a result" in records["crash"]["traceback"]
    machine = {str(src), str(src.resolve()), sys.prefix, str(Path(sys.prefix).resolve())}
    texts = [text for record in records.values() for text in (record["message"], record["traceback"])]
    for text in texts + [built.html("model"), built.html("crash"), built.html("yaml")]:
        for folder in machine:
            assert folder not in text, (folder, text[:2000])


def test_a_yaml_error_keeps_its_caret_diagram(failed: tuple[Path, Build]) -> None:
    """The caret under ``}`` (column 10 of ``{n: [1, 2}``) stays under it on the page."""
    src, built = failed
    record = record_of(built, src, "yaml", "tv-heatmap")
    assert record.rstrip().endswith("[tensorviz.option]") and "not valid YAML" in record
    assert "front matter" not in record  # a typo above code in the body: not a value continued there
    (diagram,) = literal_blocks(built.html("yaml"), "tv-message-detail")
    lines = diagram.splitlines()
    pointed = [(lines[i], lines[i + 1]) for i in range(len(lines) - 1) if lines[i].strip() == "{n: [1, 2}"]
    assert pointed, diagram
    source, caret = pointed[-1]
    assert caret.strip() == "^" and source[caret.index("^")] == "}", diagram


def test_every_author_frame_is_shown_when_the_traceback_is_longer_than_a_tail(failed: tuple[Path, Build]) -> None:
    """The warning and the error box used to show the last 8 lines of the traceback: with three author
    frames and a message of three lines, the header and the outer frames were cut, and a caret line
    was left dangling. The folded traceback is short already (library frames are one line), so it is
    shown whole, from its header, every author frame in order."""
    src, built = failed
    record = record_of(built, src, "nested", "tv-heatmap")
    assert "\nTraceback (your code first, most recent call last):\n" in record, record  # after the message
    traceback = record[record.index("Traceback (your code first"):]
    frames = [traceback.index(f'File "models/nested.py", line {line}, in {name}')
              for line, name in ((2, "outer"), (6, "middle"), (10, "inner"))]
    assert frames == sorted(frames), traceback
    assert "(see the lesson's first paragraph)" in traceback
    (shown,) = literal_blocks(built.html("nested"), "tv-traceback")
    assert shown.startswith("Traceback (your code first") and 'line 2, in outer' in shown, shown
