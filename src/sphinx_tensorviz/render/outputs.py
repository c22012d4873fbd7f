"""Files a build writes next to its pages: one folder for all of them, written only when changed.

Writing only changed files keeps a rebuild from touching what a web server or a sync tool
already has, and keeps file times meaningful.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..warnings_ import Subtype, warn

#: the folder, relative to the HTML output folder, of every file the extension writes
OUTPUT_FOLDER = "_tensorviz"


#: the outputs of the figures being drawn (innermost last), see :func:`recording_outputs`
_RECORDINGS: list[dict[Path, bytes]] = []


@contextmanager
def recording_outputs() -> Iterator[dict[Path, bytes]]:
    """Collect every file declared (:func:`declare_output`) while the block runs, in order: what a
    figure needs next to its page, so a cached figure can put the same files there again."""
    made: dict[Path, bytes] = {}
    _RECORDINGS.append(made)
    try:
        yield made
    finally:
        _RECORDINGS.remove(made)


def declare_output(target: Path, content: bytes) -> None:
    """Say that the page being drawn needs ``target`` to hold ``content`` (written or already there)."""
    for made in _RECORDINGS:
        made[target] = content


def write_or_warn(target: Path, job: Callable[[], None]) -> None:
    """Run ``job``, which writes ``target`` (and only files of the output folder), now.

    A write that fails (a read-only or full output folder, a file where a folder goes) is a
    ``tensorviz.output`` warning naming the file, not a traceback: the build finishes, and fails
    under ``-W``. The writes are made in place, in the build's thread: a writer thread saved less
    than the run-to-run noise of a build (``bench/bench_build.py``), and it had to change the
    interpreter's switch interval and hook every fork of the host process to do so.
    """
    try:
        job()
    except OSError as error:
        shown = error.filename or target
        warn(f"could not write {shown} in the output folder: {error}; the page links to it, so make "
             "the folder writable (or give it room) and build again", Subtype.output)


def write_if_changed(target: Path, content: bytes) -> None:
    """Write ``content`` to ``target`` (making its folder) unless the file already holds exactly that."""
    declare_output(target, content)
    write_or_warn(target, lambda: _write_if_changed(target, content))


def _write_if_changed(target: Path, content: bytes) -> None:
    try:
        if target.read_bytes() == content:
            return
    except OSError:
        pass
    try:
        target.write_bytes(content)
    except FileNotFoundError:  # a new folder (made only then: most files go to folders that exist)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def write_files(files: list[tuple[Path, bytes]]) -> None:
    """Write each file as :func:`write_if_changed` would, in order, with one ``mkdir`` per folder;
    a folder this call made is new, so its files are written without being read first (a fresh
    output folder: every file a kept figure puts back)."""
    for target, content in files:
        declare_output(target, content)
    if files:
        write_or_warn(files[-1][0], lambda: _write_files(files))


def _write_files(files: list[tuple[Path, bytes]]) -> None:
    made: set[Path] = set()
    seen: set[Path] = set()
    for target, content in files:
        folder = target.parent
        if folder not in seen:
            seen.add(folder)
            try:
                folder.mkdir(parents=not folder.parent.is_dir())
                made.add(folder)
            except FileExistsError:
                pass
        if folder in made:
            target.write_bytes(content)
        else:
            _write_if_changed(target, content)


_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can hold


def stable_zip(folder: str, files: dict[str, bytes]) -> bytes:
    """A zip of ``files`` (name -> content, names relative) under ``folder/``, in name order, the same
    byte for byte on every build: fixed time stamps and modes, and no compression, whose bytes depend
    on the zlib version. A download's sha256 on the page stays that of the file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(files):
            entry = zipfile.ZipInfo(f"{folder}/{name}", date_time=_EPOCH)
            entry.external_attr = 0o644 << 16  # rw-r--r--, whatever the build's umask
            entry.create_system = 3  # Unix, so the mode above is read back
            archive.writestr(entry, files[name])
    return buffer.getvalue()
