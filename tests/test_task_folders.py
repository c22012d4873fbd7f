"""A Dask task's private folder, and the folders of killed workers: removed by the next task,
never one of a process that still runs, of another user, or of another name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sphinx_tensorviz.execute import task_folders
from sphinx_tensorviz.execute.task_folders import PREFIX, remove_abandoned, task_folder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process ids are probed with signal 0")


def _ended_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()  # reaped: the id names no process now
    return done.pid


def test_only_the_folders_of_ended_processes_are_removed(tmp_path: Path) -> None:
    ended, alive = _ended_pid(), os.getpid()
    left = tmp_path / f"{PREFIX}{ended}-k1ll3d"
    (left / "src" / "models").mkdir(parents=True)
    (left / "src" / "models" / "lesson.py").write_text("x = 1\n", "utf-8")
    running = tmp_path / f"{PREFIX}{alive}-runn1ng"
    running.mkdir()
    older = tmp_path / f"{PREFIX}{ended}"  # not a name this version makes (no random part)
    older.mkdir()
    a_file = tmp_path / f"{PREFIX}{ended}-f1le"
    a_file.write_text("not a folder", "utf-8")
    unrelated = tmp_path / f"other-{ended}-folder"
    unrelated.mkdir()
    assert remove_abandoned(tmp_path) == [left]
    assert not left.exists()
    assert running.is_dir() and older.is_dir() and a_file.is_file() and unrelated.is_dir()


def test_a_task_folder_names_its_process_and_goes_when_the_task_ends(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(task_folders.tempfile, "tempdir", str(tmp_path))
    killed = tmp_path / f"{PREFIX}{_ended_pid()}-k1ll3d"
    killed.mkdir()
    with task_folder() as folder:
        assert not killed.exists()  # cleared before the task starts
        assert folder.parent == tmp_path and folder.name.startswith(f"{PREFIX}{os.getpid()}-")
        (folder / "src").mkdir()
    assert not folder.exists()
    assert list(tmp_path.iterdir()) == []
