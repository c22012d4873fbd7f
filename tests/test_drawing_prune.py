"""The drawing cache forgets what no build used for weeks, and looks for it at most once a day."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sphinx_tensorviz.core import kept_files
from sphinx_tensorviz.render.cache import MAX_AGE_DAYS, PRUNED_STAMP, RenderCache

DAY = 24 * 3600


def entry(root: Path, name: str, age_days: float) -> Path:
    path = root / name[:2] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<svg/>", "utf-8")
    then = time.time() - age_days * DAY
    os.utime(path, (then, then))
    return path


@pytest.fixture(autouse=True)
def new_process() -> None:
    kept_files._prune_once.cache_clear()  # each RenderCache below is the first of its process


def test_old_entries_and_stray_temporary_files_go_used_ones_stay(tmp_path: Path) -> None:
    old = entry(tmp_path, "aa-old.svg", MAX_AGE_DAYS + 1)
    recent = entry(tmp_path, "aa-recent.svg", MAX_AGE_DAYS - 1)
    stray = entry(tmp_path, "bb-write.tmp", 2)
    writing = entry(tmp_path, "bb-now.tmp", 0)  # another build may be writing it right now
    RenderCache(tmp_path)
    assert not old.exists() and not stray.exists()
    assert recent.exists() and writing.exists()
    assert (tmp_path / PRUNED_STAMP).is_file()


def test_the_cache_is_looked_over_at_most_once_a_day(tmp_path: Path) -> None:
    RenderCache(tmp_path / "none")  # no cache folder yet: nothing to do, nothing made
    assert not (tmp_path / "none").exists()
    entry(tmp_path, "cc-first.svg", 0)
    RenderCache(tmp_path)  # the day's first build
    old = entry(tmp_path, "cc-old.svg", MAX_AGE_DAYS + 5)
    kept_files._prune_once.cache_clear()
    RenderCache(tmp_path)  # a later build the same day leaves it
    assert old.exists()
    stamp = tmp_path / PRUNED_STAMP
    yesterday = time.time() - DAY - 60
    os.utime(stamp, (yesterday, yesterday))
    kept_files._prune_once.cache_clear()
    RenderCache(tmp_path)  # the next day's first build removes it
    assert not old.exists()
    assert time.time() - stamp.stat().st_mtime < 60


def test_a_used_entry_is_marked_so_pruning_spares_it(tmp_path: Path) -> None:
    drawings = RenderCache(tmp_path)
    drawn = []
    first = drawings.svg("dd" * 16, "ee" * 16, lambda: drawn.append(1) or "<svg>a</svg>")
    path = next(tmp_path.glob("dd/*.svg"))
    then = time.time() - (MAX_AGE_DAYS - 2) * DAY
    os.utime(path, (then, then))
    assert drawings.svg("dd" * 16, "ee" * 16, lambda: "<svg>other</svg>") == first == "<svg>a</svg>"
    assert drawn == [1] and time.time() - path.stat().st_mtime < 60  # read from the cache, and touched
