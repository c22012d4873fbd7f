"""Jobs that carry their lesson files, so a machine without the course's source tree can run them.

A local job names files by absolute path (``srcdir``, ``entryPath``, ``searchPath``).
:func:`portable_job` replaces them by paths relative to the source folder and adds
the files' text (``sources``): the entry file and every project-local module it
imports, exactly the files whose hashes are part of the content hash (the job's
``files``). A file that changed since the build read it is refused, since its
result would be stored under the old hash. :func:`materialise` writes the files
into a private folder on the machine that runs the job and turns the job back into
a local one.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from ..core.hashing import sha256_text
from ..core.request import INLINE


class PortableJobError(ValueError):
    """A job whose files cannot be carried (changed since read, unsafe path)."""


def portable_job(job: dict[str, Any]) -> dict[str, Any]:
    """``job`` with its files' text and with paths relative to the source folder."""
    srcdir = Path(job["srcdir"])
    sources: dict[str, str] = {}
    for relative, expected in sorted(job.get("files", {}).items()):
        if relative == INLINE:  # the body travels as inlineCode already
            continue
        try:
            text = (srcdir / relative).read_text("utf-8")
        except OSError as exc:
            raise PortableJobError(f"{relative} cannot be read any more ({exc})") from None
        if sha256_text(text) != expected:
            raise PortableJobError(f"{relative} changed since the build read it; build again")
        sources[relative] = text

    def inside(path: str) -> str:
        return Path(path).relative_to(srcdir).as_posix()

    carried = {k: v for k, v in job.items() if k not in ("srcdir", "entryPath", "searchPath", "inlineName")}
    carried.update(sources=sources, searchPath=[inside(p) for p in job["searchPath"]])
    if "entryPath" in job:
        carried["entryPath"] = inside(job["entryPath"])
    if "inlineName" in job:
        doc, _, line = job["inlineName"].rpartition(":")
        carried["inlineName"] = f"{inside(doc)}:{line}"
    return carried


def materialise(job: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Write a portable job's files under ``folder`` and return the job as a local one."""
    folder = folder.resolve()

    def place(relative: str) -> Path:
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts:
            raise PortableJobError(f"refusing the path {relative!r} in a job: it leaves the job's folder")
        return folder.joinpath(*pure.parts)

    for relative, text in job["sources"].items():
        target = place(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    local = {k: v for k, v in job.items() if k != "sources"}
    local["srcdir"] = str(folder)
    local["searchPath"] = [str(place(p)) for p in job["searchPath"]]
    for path in local["searchPath"]:
        Path(path).mkdir(parents=True, exist_ok=True)
    if "entryPath" in job:
        local["entryPath"] = str(place(job["entryPath"]))
    if "inlineName" in job:
        doc, _, line = job["inlineName"].rpartition(":")
        local["inlineName"] = f"{place(doc)}:{line}"
    return local
