"""Guided tours, activation checkpoints, lesson metadata and the catalogue, built from a real
PyTorch execution of a small model (tests/roots/test-tour)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from sphinx.application import Sphinx
from sphinx.util.console import strip_escape_sequences

pytestmark = pytest.mark.sphinx

ROOT = Path(__file__).resolve().parent / "roots" / "test-tour"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("tour")
    src = shutil.copytree(ROOT, tmp / "src")
    results = {}
    for builder in ("html", "text"):
        warnings = io.StringIO()
        app = Sphinx(src, src, tmp / builder, tmp / f"{builder}.doctrees", builder,
                     status=io.StringIO(), warning=warnings, freshenv=True)
        app.build()
        results[builder] = strip_escape_sequences(warnings.getvalue())
    store = src / "tensorviz_artifacts"
    artifact = json.loads(next(store.glob("*.json")).read_text())
    return {"html": (tmp / "html" / "lesson.html").read_text("utf-8"),
            "index": (tmp / "html" / "index.html").read_text("utf-8"),
            "text": (tmp / "text" / "lesson.txt").read_text("utf-8"),
            "warnings": results["html"], "artifact": artifact, "lesson_line": _line("lesson.md")}


def _line(name: str) -> dict[str, int]:
    """Line numbers of the directives in the root's page, from the file itself."""
    lines = (ROOT / name).read_text().splitlines()
    found: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        match = re.match(r"^`{3,4}\{(tv-[a-z]+)\}\s*(\S*)", text)
        if match:
            found.setdefault(f"{match.group(1)} {match.group(2)}".strip(), number)
    return found


def test_unknown_step_target_warns_with_the_closest_ids(built: dict[str, Any]) -> None:
    line = built["lesson_line"]["tv-step third"]
    warning = next(w for w in built["warnings"].splitlines() if "'upp'" in w)
    assert f"lesson.md:{line}" in warning and "[tensorviz.target]" in warning
    assert "closest: up" in warning


def test_steps_naming_an_unknown_graph_and_a_stray_step_warn(built: dict[str, Any]) -> None:
    assert re.search(r"lesson\.md:\d+: WARNING: tv-steps: no tv-graph named 'nosuchgraph' on this page "
                     r"\(named graphs: small\) \[tensorviz\.target\]", built["warnings"])
    line = built["lesson_line"]["tv-step stray"]
    assert re.search(rf"lesson\.md:{line}: WARNING: tv-step only works inside a tv-steps block", built["warnings"])
    assert "Never shown" not in built["html"] and "Outside any tour" not in built["html"]


def test_tour_is_an_ordered_list_that_links_nodes_and_source(built: dict[str, Any]) -> None:
    html = built["html"]
    section = re.search(r'<section class="tv-steps" id="([^"]+)" data-graph="([^"]+)" data-opening="second"', html)
    assert section, "the tour section with its opening step"
    steps_id, figure_id = section.groups()
    items = re.findall(r'<li class="tv-step" id="([^"]+)" data-step="([^"]+)" data-target="([^"]+)"', html)
    assert [(s, t) for _, s, t in items] == [("first", "norm"), ("second", "up"), ("third", "upp")]
    assert all(i.startswith(steps_id) for i, _, _ in items)
    # each known target links to its node in the graph and to its source line
    norm_line = next(n["source"]["line"] for n in built["artifact"]["data"]["layers"] if n["id"] == "norm")
    assert f'href="#{figure_id}-c-norm"' in html or f'href="#{figure_id}-n-norm"' in html
    assert f'href="#{figure_id}-L{norm_line}"' in html and f'id="{figure_id}-L{norm_line}"' in html
    # MyST in notes: math and inline code
    first = html[html.index('data-step="first"'):html.index('data-step="second"')]
    assert '<span class="math' in first and "<code" in first


def test_checkpoints_are_recorded_and_drawn_as_small_multiples(built: dict[str, Any]) -> None:
    activations = built["artifact"]["data"]["activations"]
    assert list(activations) == ["norm", "up"]
    norm = activations["norm"]["values"]
    rms = (sum(v * v for v in norm) / len(norm)) ** 0.5
    assert abs(rms - 1) < 1e-4
    assert activations["norm"]["metrics"]["rms"] == pytest.approx(rms)
    html = built["html"]
    assert html.count('class="tv-checkpoint"') == 2
    strip = html[html.index('data-checkpoint="norm"'):]
    assert "<svg" in strip and "Values at norm" in strip and "Feature RMS" in strip
    prediction = html.index("What is the RMS after the norm?")
    assert prediction < html.index('data-checkpoint="norm"')


def test_lesson_header_footer_and_claims(built: dict[str, Any]) -> None:
    html = built["html"]
    assert 'class="tv-question"' in html and "What does a norm before a linear layer do?" in html
    assert "Test milestone (2024, Mechanism)" in html and 'href="https://example.org/paper"' in html
    assert "Attribution: The test suite. · License: MIT" in html
    assert "✓ passed" in html and "checks 1/1 passed" in html
    assert built["artifact"]["checks"][0]["passed"] is True


def test_catalogue_lists_the_lesson_with_a_thumbnail(built: dict[str, Any]) -> None:
    index = built["index"]
    assert 'href="lesson.html"' in index and "A small lesson" in index
    assert "Testing · norm, relu" in index
    assert 'src="_tensorviz/previews/lesson.svg"' in index


def test_text_builder_reads_the_tour_and_checkpoints(built: dict[str, Any]) -> None:
    text = built["text"]
    assert "1. **Normalise first**" in text or "1. Normalise first" in text.replace("*", "")
    assert "Values at up" in text and "Feature RMS" in text


def test_graph_numbers_the_tour_stops_for_readers_without_script(built: dict[str, Any]) -> None:
    """Static first: the graph carries the step numbers, so the tour reads in print and without JS."""
    html = built["html"]
    graph = html[html.index('class="tv-graph"'):html.index("</svg>", html.index('class="tv-graph"'))]
    markers = re.findall(r'class="tv-step-marker" data-step-number="(\d+)"><title>Step \d+: ([^<]+)</title>', graph)
    # steps 1 and 2 target real nodes; step 3's target does not exist, so it has no marker
    assert sorted(markers) == [("1", "Normalise first"), ("2", "Then project")]


def test_the_closest_ids_are_named_once_with_a_hint_of_what_to_write(built: dict[str, Any]) -> None:
    """A node whose drawn label is its id was suggested twice (``closest: up, up``)."""
    warning = next(w for w in built["warnings"].splitlines() if "'upp'" in w)
    named = re.search(r"closest: (.+?) \(", warning)
    assert named is not None, warning
    names = named.group(1).split(", ")
    assert "up" in names and len(names) == len(set(names)), warning
    assert "write" in warning.split("closest:")[1] and "outline" in warning, warning
