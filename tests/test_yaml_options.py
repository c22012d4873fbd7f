"""Options given as YAML are read with libyaml's parser where PyYAML has it: the same values as the
pure-Python safe loader, the same refusals, and errors that quote the line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sphinx_tensorviz.read import options
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
