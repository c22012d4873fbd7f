"""Files a build writes next to its pages: one folder for all of them, written only when changed.

Writing only changed files keeps a rebuild from touching what a web server or a sync tool
already has, and keeps file times meaningful.
"""

from __future__ import annotations

from pathlib import Path

#: the folder, relative to the HTML output folder, of every file the extension writes
OUTPUT_FOLDER = "_tensorviz"


def write_if_changed(target: Path, content: bytes) -> None:
    """Write ``content`` to ``target`` (making its folder) unless the file already holds exactly that."""
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
