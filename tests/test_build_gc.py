"""The build freezes what reading made while pages are written, and leaves the process as it found it.

A real build of the snapshot root (committed artifacts: nothing executes), in this process.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx
from sphinx_tensorviz import extension

pytestmark = pytest.mark.sphinx


def test_objects_are_frozen_while_pages_are_written_and_thawed_after(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = extension._freeze_what_was_read

    def spy(app, env):  # noqa: ANN001, ANN202
        real(app, env)
        seen.append(gc.get_freeze_count())

    monkeypatch.setattr(extension, "_freeze_what_was_read", spy)
    assert gc.get_freeze_count() == 0
    built = run_sphinx(copy_root("snapshot", tmp_path / "src", with_store=True))
    assert built.statuscode == 0 and built.summary == (0, 2, 0)
    assert seen and seen[0] > 1000  # the environment and the read artifacts were frozen
    assert gc.get_freeze_count() == 0  # and nothing stays frozen after the build


def test_a_freeze_made_by_someone_else_is_left_alone(tmp_path: Path) -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        built = run_sphinx(copy_root("snapshot", tmp_path / "src", with_store=True))
        assert built.statuscode == 0
        assert gc.get_freeze_count() > 0.9 * frozen  # not thawed by the build (a few objects were freed)
    finally:
        gc.unfreeze()
