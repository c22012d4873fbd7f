"""A graph's per-module files are written once per key, completely, with nothing left half-written."""

from __future__ import annotations

from pathlib import Path

from sphinx_tensorviz.features.graph.frames import FOLDER, INDEX, write_frame_files

FILES = {INDEX: "tensorvizData('k','index',{});\n", "m0.js": "tensorvizData('k','m0',{\"é\":1});\n",
         "m1.js": "tensorvizData('k','m1',{});\n"}


def written(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text("utf-8") for p in folder.iterdir()}


def test_files_are_written_once_per_key(tmp_path: Path) -> None:
    folder = write_frame_files(FILES, "abc", tmp_path)
    assert folder == f"{FOLDER}/abc" and written(tmp_path / folder) == FILES
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / folder).iterdir()}
    assert write_frame_files({**FILES, "m0.js": "other"}, "abc", tmp_path) == folder  # same key: same files
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / folder).iterdir()} == stamps


def test_an_interrupted_folder_is_completed(tmp_path: Path) -> None:
    """A folder without its index (a build stopped while writing it, or another writer's) is written
    again, file by file through temporary names, and ends complete with no temporary file left."""
    partial = tmp_path / FOLDER / "abc"
    partial.mkdir(parents=True)
    (partial / "m0.js").write_text("tensorvizDa", "utf-8")  # cut short
    write_frame_files(FILES, "abc", tmp_path)
    assert written(partial) == FILES


def test_page_files_are_written_into_new_folders_and_only_when_changed(tmp_path: Path) -> None:
    from sphinx_tensorviz.render.outputs import write_if_changed

    target = tmp_path / "_tensorviz" / "deep" / "er" / "run.py"
    write_if_changed(target, b"print(1)\n")  # its folders do not exist yet
    assert target.read_bytes() == b"print(1)\n"
    before = target.stat().st_mtime_ns
    write_if_changed(target, b"print(1)\n")
    assert target.stat().st_mtime_ns == before  # unchanged: not written again
    write_if_changed(target, b"print(2)\n")
    assert target.read_bytes() == b"print(2)\n"


def test_completed_files_are_readable_like_the_others(tmp_path: Path) -> None:
    """Files written through a temporary name get the output's usual permissions, not the temporary
    file's owner-only 0600 (a web server running as another user must read them)."""
    import stat

    fresh = tmp_path / "fresh"
    write_frame_files(FILES, "abc", fresh)
    partial = tmp_path / "partial" / FOLDER / "abc"
    partial.mkdir(parents=True)
    write_frame_files(FILES, "abc", tmp_path / "partial")
    for folder in (fresh / FOLDER / "abc", partial):
        assert all(stat.S_IMODE(p.stat().st_mode) & 0o044 == 0o044 for p in folder.iterdir())
