""""Reproduce this figure": the model files, ``run.py``, ``requirements.txt``, the figure
SVG and the artifact itself, written next to the HTML with their sha256 and size.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes

from ...core.i18n import _, counted
from ...execute.reproduce import code_files, requirements_txt, run_py
from ...render.html_nodes import tv_html_tag
from ...render.outputs import OUTPUT_FOLDER, write_if_changed
from .archive import archive_name, instructions, reproduce_zip
from .checked import check_download_fields


@dataclass(frozen=True)
class Download:
    name: str  #: path relative to the figure's download folder
    sha256: str
    size: int


INLINE_FILE = "lesson_code.py"


def write_downloads(artifact: dict[str, Any], stored: bytes, svg: str, srcdir: Path, outdir: Path,
                    inline_code: str | None = None) -> tuple[str, list[Download]]:
    """Write the files (only when changed) and return (folder relative to outdir, files).

    ``stored`` is the artifact as the store keeps it. Code written in the directive body
    (``inline_code``) is saved as ``lesson_code.py``. Raises :class:`.checked.RefusedDownload`,
    having written nothing, when a field the files are made from is not of its form.
    """
    check_download_fields(artifact)
    folder = f"{OUTPUT_FOLDER}/{artifact['contentHash'][:16]}"
    files = code_files(artifact, srcdir, inline_code, INLINE_FILE)
    files["run.py"] = run_py(artifact, INLINE_FILE if INLINE_FILE in files else None).encode()
    files["requirements.txt"] = requirements_txt(artifact).encode()
    files["preview.svg"] = ('<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n").encode()
    files["artifact.json"] = stored
    archive = archive_name(artifact["contentHash"])
    files = {archive: reproduce_zip(archive.removesuffix(".zip"), files), **files}  # first: the one to take
    made = []
    for name, content in files.items():
        write_if_changed(outdir / folder / name, content)  # names are project paths (checked above)
        made.append(Download(name, hashlib.sha256(content).hexdigest(), len(content)))
    return folder, made


def downloads_list(files: list[Download], href: Any) -> nodes.Element:
    """A list of links (``href(name)`` gives the URL, or ``None`` for no link), the archive first, and
    the commands that run it; folded: with their sha256s the lines took over a phone screen under
    every figure."""
    # file names, sizes and hashes: not searched
    box = tv_html_tag(tag="details", attrs={"class": "tv-downloads no-search"}, classes=["no-search"])
    summary = tv_html_tag(tag="summary", attrs={})
    summary += nodes.Text(_("Reproduce this figure ({files})").format(files=counted(len(files), "file", "files")))
    box += summary
    items = nodes.bullet_list()
    for item in files:
        para = nodes.paragraph()
        url = href(item.name)
        para += nodes.reference("", item.name, refuri=url) if url else nodes.literal("", item.name)
        para += nodes.Text(f" · {counted(item.size, 'byte', 'bytes')} · sha256 ")
        para += nodes.literal("", item.sha256, classes=["tv-sha"])
        items += nodes.list_item("", para)
    box += items
    archive = files[0].name
    before, _archive, after = _("To run it, download {archive} (the code, run.py and requirements.txt, each in "
                                "the folder run.py expects it in) and, in the folder you saved it to, "
                                "run:").partition("{archive}")
    box += nodes.paragraph("", "", nodes.Text(before), nodes.literal("", archive), nodes.Text(after))
    commands = instructions(archive)
    box += nodes.literal_block(commands, commands, language="text", linenos=False, classes=["tv-commands"])
    box += nodes.paragraph("", _("run.py recomputes the figure and compares it with the record, within the "
                                 "tolerance of each value's dtype."))
    return box
