"""Machine-local caches of a cached build: a fresh output folder draws and validates nothing it drew
or validated before, and neither cache can make a build show something else.

Real Sphinx builds of the snapshot root (committed artifacts: nothing executes), each in a fresh
copy, so output folder, doctrees and project path are new every time; the user's cache folder
is a temporary one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import STORE, copy_root, run_sphinx
from sphinx_tensorviz.features.graph import render as graph_render
from sphinx_tensorviz.features.heatmap import render as heatmap_render
from sphinx_tensorviz.render import transform
from sphinx_tensorviz.store import artifacts

pytestmark = pytest.mark.sphinx


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    """Counts of drawing and validating in this process, with a cache folder of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    counted: dict[str, Any] = {"heatmap": 0, "graph": 0, "frames": 0, "schema": 0, "checked": []}

    def counting(module: Any, name: str, key: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[key] += 1
            if key == "schema":
                counted["checked"].append(args[0].get("contentHash"))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counting(heatmap_render, "cell_grid_svg", "heatmap")
    counting(graph_render, "graph_to_svg", "graph")
    counting(graph_render, "frame_files", "frames")
    counting(artifacts, "schema_errors", "schema")
    return counted


def fresh_build(tmp_path: Path, name: str, **overrides: Any) -> tuple[str, str]:
    src = copy_root("snapshot", tmp_path / name, with_store=True)
    built = run_sphinx(src, confoverrides=overrides)
    assert built.statuscode == 0 and built.summary == (0, 2, 0) and not built.tensorviz_warnings()
    return built.html("index"), built.html("lesson")


def test_a_fresh_output_folder_draws_and_validates_nothing_again(calls: dict[str, Any], tmp_path: Path) -> None:
    first = fresh_build(tmp_path, "first")
    assert calls["heatmap"] and calls["graph"] and calls["frames"] and calls["schema"] == 2
    drawn = dict(calls)
    again = fresh_build(tmp_path, "again")
    assert calls == drawn  # no drawing, no schema check: both came from this machine's caches
    assert again == first  # and the pages are the same


def test_without_the_drawing_cache_each_output_folder_draws(calls: dict[str, Any], tmp_path: Path) -> None:
    fresh_build(tmp_path, "first", tensorviz_drawing_cache=False)
    drawn = calls["heatmap"] + calls["graph"]
    fresh_build(tmp_path, "second", tensorviz_drawing_cache=False)
    assert calls["heatmap"] + calls["graph"] == 2 * drawn > 0
    assert not (tmp_path / "user-cache" / "sphinx-tensorviz" / "drawings").exists()


def test_a_changed_artifact_is_checked_again(calls: dict[str, Any], tmp_path: Path) -> None:
    """The validation cache knows bytes, not names: an artifact whose file changed is checked anew
    (and refused when it no longer matches the schema)."""
    fresh_build(tmp_path, "first")
    src = copy_root("snapshot", tmp_path / "edited", with_store=True)
    heatmap = next(p for p in (src / STORE).glob("*.json") if json.loads(p.read_text())["data"]["kind"] == "heatmap")
    artifact = json.loads(heatmap.read_text())
    artifact["data"]["unit"] = 7  # a number where the schema wants text
    heatmap.write_text(json.dumps(artifact, indent=2), "utf-8")
    before = len(calls["checked"])
    built = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert set(calls["checked"][before:]) == {heatmap.stem}  # only the edited file, on every read (it fails)
    assert any("does not match the artifact schema" in w for w in built.tensorviz_warnings())


def test_a_catalogue_preview_comes_from_the_drawing_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The preview is one SVG: a fresh output folder copies it, without making the preview figure's
    other parts (outline, tables, source panels) again, and the file is the same."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    made: list[str] = []
    real = graph_render.graph_parts

    def counting(artifact: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        made.append(artifact["contentHash"])
        return real(artifact, *args, **kwargs)

    monkeypatch.setattr(graph_render, "graph_parts", counting)
    monkeypatch.setattr(transform, "for_page", lambda page: None)  # the page's own graph is drawn each time
    previews = []
    for name in ("first", "again"):
        src = copy_root("snapshot", tmp_path / name, with_store=True)
        index = src / "index.md"
        index.write_text(index.read_text("utf-8") + "\n```{tv-catalogue}\n```\n", "utf-8")
        before = len(made)
        built = run_sphinx(src)
        assert built.statuscode == 0 and not built.tensorviz_warnings()
        preview = sorted((built.outdir / "_tensorviz" / "previews").glob("*.svg"))
        assert [p.name for p in preview] == ["lesson.svg"] and 'src="_tensorviz/previews/lesson.svg"' in built.html("index")
        previews.append((len(made) - before, preview[0].read_bytes()))
    (first_made, first_svg), (again_made, again_svg) = previews
    assert again_made == first_made - 1  # the page's own graphs only: the preview was not made again
    assert again_svg == first_svg and b"<svg" in first_svg
