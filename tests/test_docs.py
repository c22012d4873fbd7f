"""The manual in ``docs/``: it builds with ``-W`` from its committed artifacts, and its reference
pages document every directive option, configuration value, warning subtype and CLI option.

The lists come from the code (the directives Sphinx actually registers, the configuration values
the build declared, ``Subtype``, the ``tensorviz`` argument parser), so adding any of them without
documenting it fails here.
"""

from __future__ import annotations

import argparse
import ast
import html
import io
import json
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from docutils.parsers.rst import directives as rst_directives
from sphinx.application import Sphinx
from sphinx.util.console import strip_escape_sequences
from sphinx.util.docutils import docutils_namespace, patch_docutils

from sphinx_tensorviz.cli import build_parser
from sphinx_tensorviz.config import config_values
from sphinx_tensorviz.core.config_values import ConfigValue
from sphinx_tensorviz.features.attention.directive import AttentionDirective
from sphinx_tensorviz.features.graph.activations.directive import ActivationsDirective
from sphinx_tensorviz.features.graph.directive import GraphDirective
from sphinx_tensorviz.features.graph.tour.directive import StepDirective, StepsDirective
from sphinx_tensorviz.features.heatmap.directive import HeatmapDirective
from sphinx_tensorviz.features.lens.directive import LensDirective
from sphinx_tensorviz.features.lesson.directive import CatalogueDirective, LessonDirective
from sphinx_tensorviz.features.patch.directive import PatchDirective
from sphinx_tensorviz.features.train.directive import TrainDirective
from sphinx_tensorviz.read.directives import ExecutedDirective
from sphinx_tensorviz.warnings_ import Subtype

DOCS = Path(__file__).resolve().parent.parent / "docs"
REFERENCE = DOCS / "reference"
COMMON = "Options of the executing directives"

#: The directive classes, imported from the code; the build below checks Sphinx registers exactly these.
DIRECTIVES: dict[str, type] = {
    "tv-heatmap": HeatmapDirective,
    "tv-graph": GraphDirective,
    "tv-attention": AttentionDirective,
    "tv-patch": PatchDirective,
    "tv-lens": LensDirective,
    "tv-steps": StepsDirective,
    "tv-step": StepDirective,
    "tv-activations": ActivationsDirective,
    "tv-lesson": LessonDirective,
    "tv-catalogue": CatalogueDirective,
    "tv-train": TrainDirective,
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A copy of docs/ built with -W in cache-only mode (nothing executes)."""
    tmp = tmp_path_factory.mktemp("docs")
    srcdir = tmp / "docs"
    shutil.copytree(DOCS, srcdir, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    status, warnings = io.StringIO(), io.StringIO()
    with patch_docutils(srcdir), docutils_namespace():
        app = Sphinx(srcdir, srcdir, tmp / "html", tmp / "doctrees", "html",
                     confoverrides={"tensorviz_execution_mode": "cache-only"},
                     status=status, warning=warnings, freshenv=True, warningiserror=True)
        app.build()
        registered = {name: cls for name, cls in rst_directives._directives.items() if name.startswith("tv-")}
    return {
        "config_values": config_values(app),
        "statuscode": app.statuscode,
        "status": strip_escape_sequences(status.getvalue()),
        "warnings": strip_escape_sequences(warnings.getvalue()),
        "outdir": tmp / "html",
        "registered": registered,
    }


@pytest.mark.sphinx
def test_docs_build_with_W_and_execute_nothing(built: dict[str, Any]) -> None:
    assert built["warnings"] == ""
    assert built["statuscode"] == 0
    found = re.findall(r"tensorviz: (\d+) executed, (\d+) cached, (\d+) failed", built["status"])
    assert found and found[-1][0] == "0" and int(found[-1][1]) >= 1 and found[-1][2] == "0"
    tutorial = (built["outdir"] / "tutorial.html").read_text("utf-8")
    assert 'class="tv-figure' in tutorial and "<svg" in tutorial


@pytest.mark.sphinx
def test_registered_directives_are_the_documented_ones(built: dict[str, Any]) -> None:
    assert built["registered"] == DIRECTIVES


def sections(page: Path) -> dict[str, str]:
    """``## heading`` -> the text under it (heading backticks removed)."""
    found: dict[str, str] = {}
    current = None
    for line in page.read_text("utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip().strip("`")
            found[current] = ""
        elif current is not None:
            found[current] += line + "\n"
    return found


def undocumented_options(directives: dict[str, type], page: Path) -> list[str]:
    """``directive :option:`` for every option not described (as ``:option:``) in the directive's section
    of ``page`` (or, for executing directives, in the common section)."""
    text = sections(page)
    missing = []
    for name, cls in directives.items():
        if name not in text:
            missing.append(f"{name} (no section)")
            continue
        allowed = text[name] + (text.get(COMMON, "") if issubclass(cls, ExecutedDirective) else "")
        for option in sorted(cls.option_spec or {}):
            if f"`:{option}:`" not in allowed:
                missing.append(f"{name} :{option}:")
    return missing


def test_every_directive_option_is_documented() -> None:
    assert undocumented_options(DIRECTIVES, REFERENCE / "directives.md") == []


def test_an_undocumented_option_is_caught() -> None:
    class Extended(HeatmapDirective):
        extra_options = {**HeatmapDirective.extra_options, "sparkle": rst_directives.flag}

    class Lesson(LessonDirective):
        option_spec = {**LessonDirective.option_spec, "difficulty": rst_directives.unchanged}

    found = undocumented_options({"tv-heatmap": Extended, "tv-lesson": Lesson, "tv-nothing": StepDirective},
                                 REFERENCE / "directives.md")
    assert found == ["tv-heatmap :sparkle:", "tv-lesson :difficulty:", "tv-nothing (no section)"]


def undocumented_values(values: tuple[ConfigValue, ...], page: str) -> list[str]:
    """Each value without a ``confval`` entry on the built ``page``, or whose entry's default is not the
    declared one (read back as Python, so only the value counts, not how it is written)."""
    wrong = []
    for value in values:
        start = page.find(f'id="confval-{value.name}"')
        entry = page[start:page.find("</dd></dl>", start)] if start >= 0 else ""
        shown = re.search(r">Default<.*?<code[^>]*>(.*?)</code>", entry, re.S)
        if shown is None:
            wrong.append(f"{value.name} (no entry)")
        elif ast.literal_eval(html.unescape(re.sub(r"<[^>]+>", "", shown.group(1)))) != value.default:
            wrong.append(f"{value.name} (default)")
    return wrong


@pytest.mark.sphinx
def test_every_config_value_is_on_the_built_page_with_its_default(built: dict[str, Any]) -> None:
    page = (built["outdir"] / "reference" / "configuration.html").read_text("utf-8")
    assert len(built["config_values"]) >= 20  # the package's table and its features' values
    assert undocumented_values(built["config_values"], page) == []
    unknown = ConfigValue("tensorviz_sparkle", 3, (int,), "Not declared by the package.")
    changed = ConfigValue("tensorviz_workers", 7, (int,), "A default the page does not show.")
    assert undocumented_values((unknown, changed), page) == ["tensorviz_sparkle (no entry)",
                                                             "tensorviz_workers (default)"]


def test_every_warning_subtype_is_documented() -> None:
    text = (REFERENCE / "warnings.md").read_text("utf-8")
    missing = [s.value for s in Subtype if f"`tensorviz.{s.value}`" not in text]
    assert missing == []


def test_every_cli_command_and_option_is_documented() -> None:
    text = sections(REFERENCE / "cli.md")
    whole = (REFERENCE / "cli.md").read_text("utf-8")
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for command, parser in subparsers.choices.items():
        heading = next((h for h in text if h.startswith(f"tensorviz {command}")), None)
        if heading is None:
            missing.append(command)
            continue
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and f"`{flag}" not in text[heading] and f"`{flag}" not in whole.split("## ")[0]:
                    missing.append(f"{command} {flag}")
    assert missing == []


@pytest.mark.sphinx
def test_schema_table_is_generated_from_the_shipped_schema(built: dict[str, Any]) -> None:
    schema = json.loads(resources.files("sphinx_tensorviz.store").joinpath("schemas/artifact.schema.json")
                        .read_text("utf-8"))
    page = (built["outdir"] / "reference" / "artifact-schema.html").read_text("utf-8")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", page)).split())
    for name, spec in schema["properties"].items():
        assert f"{name} " in text, name
        if spec.get("description"):
            assert " ".join(spec["description"].split()) in text, name
    from sphinx_tensorviz.core.kinds import kind_named

    for kind in ("heatmap", "graph", "attention", "sweep-check", "train"):  # each kind's own schema of its data
        for name in kind_named(kind).data_schema()["properties"]:
            assert f"data ({kind}).{name}" in text, (kind, name)
