"""Options given as YAML are read with libyaml's parser where PyYAML has it: the same values as the
pure-Python safe loader, the same refusals, and errors that quote the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import copy_root, run_sphinx, write
from sphinx_tensorviz.core.hashing import canonical_json
from sphinx_tensorviz.core.state import lessons_of, requests_of
from sphinx_tensorviz.read import options
from sphinx_tensorviz.read.front_matter import block_values
from sphinx_tensorviz.read.options import YamlProblem, load_yaml

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
SAMPLES = [
    "[batch, 4, 8]",
    "{x: [1, 2.5, -3e-2], dtype: float32, seed: 7}",
    "a: yes\nb: off\nc: ~\nd: 0x1F\ne: 1_000\nf: .inf\ng: 2026-12-01\nh: '007'",
    "steps:\n  - id: one\n    text: >\n      folded\n      text\n  - &two {id: two}\n  - *two",
    "note: |\n  kept\n  lines\n",
    "unicode: 'é ß 日本 😀'\nkey with spaces: value",
    "diagram:\n  panel: {kind: graph, width: 4, nodes: [{id: a, x: 1}]}",
]
BROKEN = ["a: [1, 2", "a: 1\n b: 2", "- a\n-b: c", "{a: 1", "a: !!python/object:os.system ls"]


@pytest.mark.parametrize("text", SAMPLES)
def test_values_are_those_of_the_safe_loader(text: str) -> None:
    assert load_yaml(text) == yaml.safe_load(text)


def test_every_yaml_option_of_the_course_reads_the_same() -> None:
    """Each ``:option: {...}`` / ``[...]`` value written in the course's lessons."""
    values = [line.split(":", 2)[2].strip() for page in LESSONS.glob("*.md")
              for line in page.read_text("utf-8").splitlines()
              if line.startswith(":") and line.count(":") >= 2 and line.split(":", 2)[2].strip()[:1] in "[{"]
    assert len(values) > 5
    for text in values:
        assert load_yaml(text) == yaml.safe_load(text), text


@pytest.mark.parametrize("text", BROKEN)
def test_what_the_safe_loader_refuses_is_refused_with_the_line_quoted(text: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(text)
    with pytest.raises(YamlProblem) as caught:
        load_yaml(text)
    assert "line" in str(caught.value)
    with pytest.raises(ValueError, match="not valid YAML/JSON"):
        options.yaml_mapping(text)


def test_without_libyaml_the_pure_parser_reads_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(yaml, "CSafeLoader", raising=False)
    assert [load_yaml(text) for text in SAMPLES] == [yaml.safe_load(text) for text in SAMPLES]


# -- every structured option, as a MyST author writes it ------------------------------------------

#: (case, directive, fixed options, option, one-line flow value, multi-line flow value, block value).
#: Continuation lines are written as they sit under the key in the ``---`` front matter.
HEATMAP = {"source": "/models/scores.py", "function": "scores"}
GRAPH = {"model": "/models/tiny.py:Tiny", "inputs": "[{name: input_ids, shape: [1, 6], dtype: int64}]"}
STRUCTURED = [
    ("heatmap-inputs", "tv-heatmap", HEATMAP, "inputs",
     "{tokens: 5, width: 8}", "{tokens: 5,\n  width: 8}", "\n  tokens: 5\n  width: 8"),
    ("heatmap-rows", "tv-heatmap", HEATMAP, "rows",
     "[first, second, third]", "[first,\n  second, third]", "\n  - first\n  - second\n  - third"),
    ("heatmap-columns", "tv-heatmap", HEATMAP, "columns",
     "[a, b, c]", "[a, b,\n  c]", "\n- a\n- b\n- c".replace("\n", "\n  ")),
    ("heatmap-choices", "tv-heatmap", {**HEATMAP, "prediction": "What happens?"}, "choices",
     "[{text: Flatter, correct: true, why: It divides by more}, {text: Sharper, why: Not so}]",
     "[{text: Flatter, correct: true, why: It divides by more},\n  {text: Sharper, why: Not so}]",
     "\n  - text: Flatter\n    correct: true\n    why: It divides by more\n  - text: Sharper\n    why: Not so"),
    ("heatmap-sweep", "tv-heatmap", HEATMAP, "sweep",
     "{temperature: [0.5, 1, 2]}", "{temperature: [0.5,\n  1, 2]}", "\n  temperature: [0.5, 1, 2]"),
    ("graph-inputs", "tv-graph", {"model": "/models/tiny.py:Tiny"}, "inputs",
     "[{name: input_ids, shape: [1, 6], dtype: int64, fill: ones}]",
     "[{name: input_ids, shape: [1, 6],\n   dtype: int64, fill: ones}]",
     "\n  - name: input_ids\n    shape: [1, 6]\n    dtype: int64\n    fill: ones"),
    ("graph-model-args", "tv-graph", GRAPH, "model-args",
     "{width: 4, vocab: 8}", "{width: 4,\n  vocab: 8}", "\n  width: 4\n  vocab: 8"),
    ("graph-call-args", "tv-graph", GRAPH, "call-args", "{scale: 2.0}", "{\n  scale: 2.0}", "\n  scale: 2.0"),
    ("graph-layout", "tv-graph", {**GRAPH, "checkpoints": "block"}, "layout",
     "{block: channels}", "{block:\n  channels}", "\n  block: channels"),
    ("graph-sweep", "tv-graph", GRAPH, "sweep",
     "{width: [4, 8]}", "{width: [4,\n  8]}", "\n  width:\n    - 4\n    - 8"),
    ("heatmap-checks", "tv-heatmap", HEATMAP, "checks",
     "rows_sum_to_one, scores", "[rows_sum_to_one,\n  scores]", "\n  - rows_sum_to_one\n  - scores"),
    ("graph-checkpoints", "tv-graph", GRAPH, "checkpoints",
     "embedding, block", "[embedding,\n  block]", "\n  - embedding\n  - block"),
    ("lesson-tags", "tv-lesson", {"question": "What changed?"}, "tags",
     "LLaMA, Mixture of experts", "[LLaMA,\n  Mixture of experts]", "\n  - LLaMA\n  - Mixture of experts"),
    ("lesson-milestone", "tv-lesson", {"question": "What changed?"}, "milestone",
     "{name: LLaMA, year: 2023, papers: [{title: LLaMA, url: 'https://arxiv.org/abs/2302.13971'}]}",
     "{name: LLaMA, year: 2023,\n  papers: [{title: LLaMA,\n    url: 'https://arxiv.org/abs/2302.13971'}]}",
     "\n  name: LLaMA\n  year: 2023\n  papers:\n    - title: LLaMA\n      url: https://arxiv.org/abs/2302.13971"),
]
FORMS = ("field", "flow", "flow-lines", "block")


def _page(case: tuple[Any, ...], form: str) -> str:
    name, directive, fixed, option, one_line, lines, block = case
    if form == "field":  # MyST's ``:key: value`` lines: one line per option
        options = "".join(f":{key}: {value}\n" for key, value in {**fixed, option: one_line}.items())
    else:
        value = {"flow": f" {one_line}", "flow-lines": f" {lines}", "block": block}[form]
        options = "---\n" + "".join(f"{key}: {v}\n" for key, v in fixed.items()) + f"{option}:{value}\n---\n"
    return f"# {name} {form}\n\n```{{{directive}}}\n{options}```\n"


@pytest.mark.sphinx
def test_every_structured_option_reads_the_same_in_every_form_myst_allows(tmp_path: Path) -> None:
    """One-line, multi-line flow and block values in the ``---`` front matter read exactly as the
    ``:key:`` line does: the same requests (content hashes and drawing options), no warning."""
    srcdir = copy_root("option-forms", tmp_path / "src")
    (srcdir / "forms").mkdir()
    for case in STRUCTURED:
        for form in FORMS:
            (srcdir / "forms" / f"{case[0]}-{form}.md").write_text(_page(case, form), "utf-8")
    built = run_sphinx(srcdir)
    assert built.warnings == "", built.warnings
    requests, lessons = requests_of(built.app.env), lessons_of(built.app.env)
    for case in STRUCTURED:
        seen = {}
        for form in FORMS:
            docname = f"forms/{case[0]}-{form}"
            if case[1] == "tv-lesson":
                seen[form] = lessons[docname][case[3]]
            else:
                seen[form] = [(r.content_hash, canonical_json(r.render)) for r in requests[docname]]
        assert seen["field"], case[0]
        assert all(value == seen["field"] for value in seen.values()), (case[0], seen)


@pytest.mark.sphinx
def test_a_value_continued_on_lines_without_a_colon_says_to_use_the_front_matter(tmp_path: Path) -> None:
    """MyST reads only lines that start with ``:`` as options: the rest of the value became the body."""
    srcdir = copy_root("option-forms", tmp_path / "src")
    (srcdir / "forms").mkdir()
    write(srcdir / "forms" / "pasted.md", "# Pasted\n\n```{tv-heatmap}\n:source: models/scores.py\n"
          ":function: scores\n:prediction: What happens?\n:choices: [{text: Flatter, correct: true},\n"
          "           {text: Sharper}]\n```\n")
    write(srcdir / "forms" / "swept.md", "# Swept\n\n```{tv-heatmap}\n:source: /models/scores.py\n"
          ":function: scores\n:sweep: temperature=[0.25, 0.5,\n         1, 2]\n```\n")
    built = run_sphinx(srcdir)
    pasted, swept = sorted(built.tensorviz_warnings())
    assert "pasted.md:3" in pasted and "[tensorviz.option]" in pasted
    assert ":choices: not valid YAML/JSON" in pasted and "--- front matter" in pasted
    assert "swept.md:3" in swept and ":sweep: cannot read" in swept and "--- front matter" in swept


def test_block_values_are_the_lines_under_their_key_and_nothing_else() -> None:
    text = ("```{tv-heatmap}\n---\nsource: a.py\nchoices:  # the answers\n  - text: A\n    correct: true\n\n"
            "  - B\nrows: [a,\n  b]\ntitle: |\n  kept\n---\nbody\n```\n")
    assert block_values(text) == {"choices": "- text: A\n  correct: true\n\n- B"}
    assert yaml.safe_load(block_values(text)["choices"]) == [{"text": "A", "correct": True}, "B"]
    unclosed = "```{tv-heatmap}\n---\ninputs:\n  tokens: 5\n```\n"
    assert block_values(unclosed) == {"inputs": "tokens: 5"}
    assert block_values("```{tv-heatmap}\n:inputs: {a: 1}\n```\n") == {}
    assert block_values(".. tv-heatmap::\n   :inputs:\n      a: 1\n") == {}


@pytest.mark.parametrize("written", ["first: 1", "first: 1\nsecond: 2", "{first: 1}", "first:"])
def test_a_mapping_where_a_list_of_names_belongs_is_an_option_error(written: str) -> None:
    """``checkpoints:`` with a mapping under it in the front matter (``first: 1``) used to be split
    into the names ``first:`` and ``1``, and failed at run time as 'produced no tensor: first:, 1'.
    A name never ends with ``:`` (a layer called again is ``name:1``), so it is a located option error."""
    from sphinx_tensorviz.read.options import name_list

    with pytest.raises(ValueError, match="a list of names"):
        name_list(written)
    assert name_list("embedding, shared:1 block.ffn") == ["embedding", "shared:1", "block.ffn"]
