"""Kept parts (``render/part_cache.py``): a fresh output folder writes what drawing and
translating every figure's parts would have written, byte for byte, and nothing stale.

Real Sphinx builds of the snapshot root (a graph with a tour and checkpoints, a heatmap, a
diagram; committed artifacts, nothing executes), each compared with a build of the same folder
with ``tensorviz_part_cache = False``, so every page, search index and download is made the way
it is without the cache.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from docutils import nodes

from conftest import STORE, copy_root, run_sphinx
from sphinx_tensorviz.features.graph import render as graph_render
from sphinx_tensorviz.features.graph.activations import render as activations_render
from sphinx_tensorviz.features.graph.tour import render as tour_render
from sphinx_tensorviz.features.heatmap import render as heatmap_render
from sphinx_tensorviz.features.heatmap import sweep as heatmap_sweep
from sphinx_tensorviz.render import part_cache, part_entries
from sphinx_tensorviz.render.html_nodes import markup, tv_html_figure
from sphinx_tensorviz.render.part_keys import plain

pytestmark = pytest.mark.sphinx


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The kinds of the figures drawn in this process (kept parts are not drawn again), with a user
    cache folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    made: list[str] = []
    for module, name in ((heatmap_render, "heatmap_parts"), (heatmap_sweep, "sweep_parts"), (graph_render, "graph_parts"),
                         (activations_render, "activations_figure"), (tour_render, "steps_figure")):
        real = getattr(module, name)

        def counting(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            made.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)
    return made


def kept_entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "user-cache" / "sphinx-tensorviz" / "drawings").rglob(f"*.{part_cache.SUFFIX}"))


def output(outdir: Path) -> dict[str, bytes]:
    """Every file of an HTML output folder but Sphinx's record of the build."""
    return {p.relative_to(outdir).as_posix(): p.read_bytes() for p in sorted(outdir.rglob("*"))
            if p.is_file() and p.name != ".buildinfo"}


def build(src: Path, **overrides: Any) -> Any:
    built = run_sphinx(src, confoverrides=overrides)
    assert built.statuscode == 0
    return built


def same_as_without(src: Path, **overrides: Any) -> dict[str, bytes]:
    """Build ``src`` with kept parts, then again, in a fresh output folder, without the cache: the
    two outputs are the same. Returns the first."""
    kept = output(build(src, **overrides).outdir)
    shutil.rmtree(src / "_build")
    without = output(build(src, **overrides, tensorviz_part_cache=False).outdir)
    assert kept.keys() == without.keys()
    differ = [name for name in kept if kept[name] != without[name]]
    assert not differ, f"kept parts changed {differ}"
    return kept


def test_a_second_build_draws_nothing_and_writes_the_same_files(drawn: list[str], tmp_path: Path) -> None:
    first = copy_root("snapshot", tmp_path / "first", with_store=True)
    built = build(first)
    assert sorted(set(drawn)) == ["activations_figure", "graph_parts", "heatmap_parts", "steps_figure"]
    assert not built.tensorviz_warnings()
    # the heatmap's and the graph's parts, the graph's checkpoints and its tour (kept whole); not the
    # diagram (authored: drawn from the page)
    assert len(kept_entries(tmp_path)) == 4
    del drawn[:]
    again = copy_root("snapshot", tmp_path / "again", with_store=True)  # another checkout, a fresh output
    pages = same_as_without(again)
    # drawn only in the build without the cache
    assert drawn.count("graph_parts") == drawn.count("heatmap_parts") == drawn.count("activations_figure") == 1
    assert drawn.count("steps_figure") == 1
    # the tour's step holds the page's only math: the kept tour still has MathJax loaded
    assert b"mathjax" in pages["lesson.html"].lower() and b"\\(W x + b\\)" in pages["lesson.html"]
    assert any(name.startswith("_tensorviz/") and name.endswith("/run.py") for name in pages)  # downloads
    assert b'class="tv-reveal"' in pages["index.html"] and b"tensorviz.js" in pages["lesson.html"]
    assert b"outer" in pages["searchindex.js"]  # the heatmap's words are still searched


def test_a_re_executed_artifact_is_shown_anew(drawn: list[str], tmp_path: Path) -> None:
    build(copy_root("snapshot", tmp_path / "first", with_store=True))
    src = copy_root("snapshot", tmp_path / "edited", with_store=True)
    for path in (src / STORE).glob("*.json"):  # the same request, run again later
        artifact = json.loads(path.read_text("utf-8"))
        artifact["generatedAt"] = "2020-01-02T03:04:00+00:00"
        path.write_text(json.dumps(artifact, indent=2), "utf-8")
    pages = same_as_without(src)
    assert b"2020-01-02 03:04 UTC" in pages["index.html"] and b"2020-01-02 03:04 UTC" in pages["lesson.html"]


def test_an_edited_model_is_not_shown_from_a_kept_figure(drawn: list[str], tmp_path: Path) -> None:
    """The model's text is part of the graph's request: edited, it names another artifact (not
    computed yet), whatever was kept for the old one."""
    build(copy_root("snapshot", tmp_path / "first", with_store=True))
    src = copy_root("snapshot", tmp_path / "edited", with_store=True)
    model = src / "models" / "tiny.py"
    model.write_text(model.read_text("utf-8") + "\n# edited after the run\n", "utf-8")
    pages = same_as_without(src, tensorviz_execution_mode="off")
    assert b"This figure has not been computed yet" in pages["lesson.html"]
    assert not any(name.endswith("/models/tiny.py") for name in pages)


def test_a_configuration_change_is_a_new_figure(drawn: list[str], tmp_path: Path) -> None:
    build(copy_root("snapshot", tmp_path / "first", with_store=True))
    src = copy_root("snapshot", tmp_path / "icon", with_store=True)
    pages = same_as_without(src, html_permalinks_icon="#")
    assert b'title="Link to this table">#</a>' in pages["index.html"]  # the data table's caption link


def test_damaged_or_altered_entries_are_drawn_anew(drawn: list[str], tmp_path: Path) -> None:
    build(copy_root("snapshot", tmp_path / "first", with_store=True))

    def out_of_the_output_folder(header: dict[str, Any], parts: list[bytes]) -> bytes:
        header["outputs"][0][0] = "../outside.txt"
        return part_entries.encode_entry(header, parts)

    def cut_short(header: dict[str, Any], parts: list[bytes]) -> bytes:
        return part_entries.encode_entry(header, parts)[:-1]  # its parts no longer add up to the file

    entries = {path: part_entries.decode_entry(path.read_bytes()) for path in kept_entries(tmp_path)}
    with_files = [path for path, (header, _) in entries.items() if header["outputs"]]
    assert with_files, "no kept parts with files of their own (the graph's frames)"
    for path, (header, parts) in entries.items():
        path.write_bytes((out_of_the_output_folder if path in with_files else cut_short)(header, parts))
    del drawn[:]
    same_as_without(copy_root("snapshot", tmp_path / "damaged", with_store=True))
    # drawn anew, then in the build without the cache
    assert drawn.count("graph_parts") == drawn.count("heatmap_parts") == drawn.count("activations_figure") == 2
    assert not (tmp_path / "damaged" / "_build" / "outside.txt").exists()
    for path in kept_entries(tmp_path):  # a file's kept bytes no longer match their hash
        header, parts = part_entries.decode_entry(path.read_bytes())
        files = len(header["outputs"])
        kept_files = [part + b" " for part in parts[len(parts) - files:]] if files else []
        path.write_bytes(part_entries.encode_entry(header, [*parts[:len(parts) - files], *kept_files]))
    del drawn[:]
    same_as_without(copy_root("snapshot", tmp_path / "altered", with_store=True))
    assert drawn.count("graph_parts") == drawn.count("heatmap_parts") == 2  # their files (downloads) were altered


def test_a_figure_that_warns_warns_on_every_build(drawn: list[str], tmp_path: Path) -> None:
    """A failed claim is warned by the figure, not its parts: kept parts do not silence it."""
    for name in ("first", "again"):
        src = copy_root("snapshot", tmp_path / name, with_store=True)
        heatmap = next(p for p in (src / STORE).glob("*.json")
                       if json.loads(p.read_text("utf-8"))["data"]["kind"] == "heatmap")
        artifact = json.loads(heatmap.read_text("utf-8"))
        artifact["checks"] = [{"name": "c", "description": "Every product is negative.", "passed": False,
                               "value": None}]
        heatmap.write_text(json.dumps(artifact, indent=2), "utf-8")
        built = build(src)
        assert any("claim failed: Every product is negative." in w for w in built.tensorviz_warnings()), name
    assert len(kept_entries(tmp_path)) == 4 and drawn.count("heatmap_parts") == 1  # kept, drawn once


def test_a_figure_whose_downloads_are_refused_warns_on_every_build(drawn: list[str], tmp_path: Path) -> None:
    """The downloads are drawn with the kind's parts; a figure whose downloads warned is not kept."""
    for name in ("first", "again"):
        src = copy_root("snapshot", tmp_path / name, with_store=True)
        heatmap = artifact_of(src, "heatmap")
        artifact = json.loads(heatmap.read_text("utf-8"))
        artifact["environment"]["python"] = "3.11; import os"
        heatmap.write_text(json.dumps(artifact, indent=2), "utf-8")
        built = build(src)
        assert any("is not a Python version" in w for w in built.tensorviz_warnings()), name
    assert drawn.count("heatmap_parts") == 2 and drawn.count("graph_parts") == 1


def test_a_page_pass_figure_that_warns_is_not_kept(drawn: list[str], tmp_path: Path) -> None:
    """A graph's checkpoints warn when one is complex: kept whole, they would warn no more."""
    for name in ("first", "again"):
        src = copy_root("snapshot", tmp_path / name, with_store=True)
        graph = next(p for p in (src / STORE).glob("*.json")
                     if json.loads(p.read_text("utf-8"))["data"]["kind"] == "graph")
        artifact = json.loads(graph.read_text("utf-8"))
        record = next(iter(artifact["data"]["activations"].values()))
        record.update({"complexPart": "real", "dtype": "complex64"})
        graph.write_text(json.dumps(artifact, indent=2), "utf-8")
        built = build(src)
        assert any("is complex (complex64)" in w for w in built.tensorviz_warnings()), name
    assert drawn.count("activations_figure") == 2 and drawn.count("steps_figure") == 1  # the tour was kept


def test_an_entry_keeps_its_parts_byte_for_byte_and_a_damaged_one_is_refused() -> None:
    header = {"version": 0, "outputs": [["a/b.js", "0" * 64]]}
    text = "lone \udcff surrogate from lesson output".encode("utf-8", "surrogatepass")
    parts = [text, b"", b"\x00\xff binary\nfile"]
    raw = part_entries.encode_entry(header, parts)
    assert part_entries.decode_entry(raw) == ({**header, "parts": [len(part) for part in parts]}, parts)
    assert part_entries.decode_entry(raw[:-1]) is None  # cut short
    assert part_entries.decode_entry(raw + b"x") is None  # written over with more
    assert part_entries.decode_entry(b'{"version": 4}') is None  # not an entry (an old JSON one)


def test_only_parts_that_translate_the_same_anywhere_are_kept() -> None:
    def figure(*children: nodes.Node) -> nodes.Element:
        made = tv_html_figure(ids=["f"], classes=[])
        made += nodes.paragraph("", "", nodes.strong("", "Title"), nodes.Text(" text"))
        made.extend(children)
        return made

    table = nodes.table("", nodes.title("", "Data"))
    output = nodes.literal_block("x", "x", language="text", linenos=False)
    assert part_cache.context_free(figure(table, markup("<svg/>"), output))
    assert not part_cache.context_free(figure(nodes.math("", "x^2")))  # an image renderer writes files
    assert part_cache.context_free(figure(nodes.math("", "x^2")), inline_math=True)  # MathJax: its text
    assert not part_cache.context_free(figure(nodes.math_block("", "x^2")), inline_math=True)  # numbered
    assert not part_cache.context_free(figure(nodes.literal_block("x", "x")))  # the page's highlight language
    # the page's line-number threshold; Sphinx's doctest-flag trimming
    assert not part_cache.context_free(figure(nodes.literal_block("x", "x", language="text")))
    assert not part_cache.context_free(figure(nodes.literal_block(">>> 1", ">>> 1", language="pycon", linenos=False)))
    assert not part_cache.context_free(figure(nodes.reference("", "up", refid="top")))  # resolved on the page
    assert part_cache.context_free(figure(nodes.paragraph("", "", nodes.reference("", "file", refuri="a/b.py"))))
    # an author's link to elsewhere: extensions check those after the figures are drawn (extlinks)
    assert not part_cache.context_free(figure(nodes.paragraph("", "", nodes.reference("", "x", refuri="https://x.org"))))
    assert not part_cache.context_free(figure(nodes.section("", nodes.title("", "A heading"))))


def test_a_key_names_values_not_objects() -> None:
    class Opaque:
        pass

    first, second = plain({"f": Opaque(), "n": 1.5, "t": (1, "a")}), plain({"f": Opaque(), "n": 1.5, "t": (1, "a")})
    assert first == second and first["t"] == [1, "a"] and first["n"] == "1.5"
    assert "0x" not in first["f"]


@pytest.mark.parametrize(("builder", "theme"), [("html", "alabaster"), ("singlehtml", "alabaster"),
                                                ("html", "pydata_sphinx_theme")])
def test_the_course_is_the_same_with_kept_parts(tmp_path: Path, drawn: list[str], builder: str, theme: str) -> None:
    """Every figure kind of the course (graphs of library models, sweeps, heatmaps with checks and
    choices), drawn and kept, then used from a fresh output folder, against none kept; a theme with
    a translator of its own (pydata) and the single-page builder included."""
    pytest.importorskip(theme)
    course = Path(__file__).resolve().parents[1] / "lessons"
    src = tmp_path / "course"
    shutil.copytree(course, src, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    # (the lessons' notebooks are written again into a fresh output folder, from the kinds' parts: not
    # the pages' parts this test is about; tests/test_notebook.py checks them)
    overrides = {"tensorviz_execution_mode": "cache-only", "html_theme": theme, "tensorviz_notebooks": False}

    def pages(**more: Any) -> dict[str, bytes]:
        built = run_sphinx(src, builder, confoverrides={**overrides, **more})
        assert built.statuscode == 0 and not built.tensorviz_warnings()
        made = output(built.outdir)
        shutil.rmtree(src / "_build")
        return made

    first = pages()
    # the parts of the course's 18 executed figures (its two sweeps included), and its 8 checkpoints and tours,
    # and of induction-heads.md's training, its checked grid and the four grids of its snapshot sweep, and
    # its two patching heatmaps and its logit lens, hf-llama.md's logit lens, and two-frameworks.md's
    # figure drawn for each framework (:show: both)
    assert len(kept_entries(tmp_path)) == 26 + 6 + 2 + 2 + 2
    every = {"graph_parts", "heatmap_parts", "sweep_parts", "activations_figure", "steps_figure"}
    assert every <= set(drawn)
    del drawn[:]
    kept = pages()
    if theme == "alabaster":  # (pydata's configuration differs in a second build in one process: each misses)
        assert not every & set(drawn)  # all kept
    without = pages(tensorviz_part_cache=False)
    assert first.keys() == kept.keys() == without.keys()
    assert [n for n in first if first[n] != without[n]] == [] and [n for n in kept if kept[n] != without[n]] == []


def test_parts_that_cannot_be_translated_alone_are_left_to_the_page(drawn: list[str], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while translating a part on its own keeps nothing: the page's writer translates it
    in place, as it does without the cache."""
    def failing(*args: Any) -> Any:
        raise RuntimeError("no document here")

    monkeypatch.setattr(part_cache, "new_document", failing)
    pages = same_as_without(copy_root("snapshot", tmp_path / "src", with_store=True))
    assert kept_entries(tmp_path) == [] and b'class="tv-reveal"' in pages["index.html"]


def artifact_of(src: Path, kind: str) -> Path:
    return next(p for p in (src / STORE).glob("*.json") if json.loads(p.read_text("utf-8"))["data"]["kind"] == kind)


def test_what_a_figure_shows_of_its_artifact_and_files_is_checked_byte_for_byte(
        drawn: list[str], tmp_path: Path) -> None:
    """Printed output (with a stray surrogate), an artifact file whose line endings changed (a git
    checkout with autocrlf) and a model file whose line endings changed: each is shown as it is
    now, although the request, and so the content hash, is the same."""
    build(copy_root("snapshot", tmp_path / "first", with_store=True))
    src = copy_root("snapshot", tmp_path / "edited", with_store=True)
    heatmap = artifact_of(src, "heatmap")
    artifact = json.loads(heatmap.read_text("utf-8"))
    artifact["stdout"] = "printed later \ud800\n"
    heatmap.write_text(json.dumps(artifact, indent=2), "utf-8")
    graph = artifact_of(src, "graph")
    graph.write_bytes(graph.read_bytes().replace(b"\n", b"\r\n"))
    model = src / "models" / "tiny.py"
    model.write_bytes(model.read_bytes().replace(b"\n", b"\r\n"))
    index = src / "index.md"  # the page's code settings do not reach the printed output
    index.write_text("```{highlight} python\n:linenothreshold: 1\n```\n\n" + index.read_text("utf-8"), "utf-8")
    pages = same_as_without(src)
    assert b"printed later" in pages["index.html"]
    downloads = {name: content for name, content in pages.items() if name.startswith("_tensorviz/")}
    assert graph.read_bytes() in downloads.values() and model.read_bytes() in downloads.values()


def test_settings_outside_the_configuration_are_part_of_the_key(drawn: list[str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A docutils.conf (the writer's table style) and an edit of conf.py itself (which may define a
    translator) make new figures."""
    build(copy_root("snapshot", tmp_path / "first", with_store=True))
    settings = tmp_path / "docutils.conf"
    settings.write_text("[html writers]\ntable_style: booktabs\n", "utf-8")
    monkeypatch.setenv("DOCUTILSCONFIG", str(settings))
    pages = same_as_without(copy_root("snapshot", tmp_path / "styled", with_store=True))
    assert b"booktabs" in pages["index.html"]
    monkeypatch.delenv("DOCUTILSCONFIG")
    src = copy_root("snapshot", tmp_path / "conf", with_store=True)
    (src / "conf.py").write_text((src / "conf.py").read_text("utf-8") + "\n# a translator could be here\n", "utf-8")
    del drawn[:]
    build(src)
    assert drawn.count("heatmap_parts") == 1


def test_only_html_dirhtml_and_singlehtml_keep_parts(drawn: list[str], tmp_path: Path) -> None:
    """epub (and htmlhelp) rewrite the links and ids of a whole page when they write it."""
    built = run_sphinx(copy_root("snapshot", tmp_path / "src", with_store=True), "epub")
    assert built.statuscode == 0 and kept_entries(tmp_path) == []


def test_the_switch_off_keeps_nothing_and_draws_every_build(drawn: list[str], tmp_path: Path) -> None:
    for name in ("first", "again"):
        build(copy_root("snapshot", tmp_path / name, with_store=True), tensorviz_part_cache=False)
    assert kept_entries(tmp_path) == [] and drawn.count("heatmap_parts") == drawn.count("graph_parts") == 2


def test_kept_parts_keep_their_labels_isolated(drawn: list[str], tmp_path: Path) -> None:
    """A label with a right-to-left override (lesson output) is isolated in the page; parts kept
    from the first build and used in a fresh output folder are the same bytes (issue 25: the parts
    were once kept before their texts were isolated)."""
    from hostile_util import make_project
    from test_hostile_markup import LABELS, RLO, _unisolated

    src = make_project(tmp_path / "src", {"labels": LABELS})
    pages = []
    for _ in range(2):
        built = build(src)
        pages.append((Path(built.outdir) / "labels.html").read_text("utf-8"))
        shutil.rmtree(src / "_build")
    assert drawn.count("heatmap_parts") == 1 and len(kept_entries(tmp_path)) == 1  # the second was kept
    assert pages[0] == pages[1] and pages[1].count(RLO) >= 5 and not _unisolated(pages[1])
