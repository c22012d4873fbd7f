"""Jobs that carry their lesson files, so a machine without the course's source tree can run them.

A local job names files by absolute path (``srcdir``, ``entryPath``, ``searchPath``).
:func:`portable_job` replaces them by paths relative to the source folder and adds
the files' text (``sources``): the entry file and every project-local module it
imports, exactly the files whose hashes are part of the content hash (the job's
``files``), and the package of a figure kind the course keeps in its folder
(:mod:`.course_kinds`), whose worker entry the job runs. A file that changed since
the build read it is refused, since its result would be stored under the old hash.
:func:`materialise` writes the files into a private folder on the machine that runs
the job and turns the job back into a local one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..core.hashing import sha256_text
from ..core.protocol import Job
from ..core.request import INLINE
from .course_kinds import course_kind


class PortableJobError(ValueError):
    """A job whose files cannot be carried (changed since read, unsafe path)."""


def portable_job(job: Job) -> Job:
    """``job`` with its files' text and with paths relative to the source folder."""
    srcdir = Path(job.srcdir)
    sources: dict[str, str] = {}
    for relative, expected in sorted(job.files.items()):
        if relative == INLINE:  # the body travels as inline code already
            continue
        try:
            text = (srcdir / relative).read_text("utf-8")
        except OSError as exc:
            raise PortableJobError(f"{relative} cannot be read any more ({exc})") from None
        if sha256_text(text) != expected:
            raise PortableJobError(f"{relative} changed since the build read it; build again")
        sources[relative] = text
    kind = course_kind(job.runner, srcdir)  # the worker imports the kind's entry from the course's folder
    for relative, path in kind.files.items() if kind is not None else ():
        try:
            sources.setdefault(relative, path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise PortableJobError(f"{relative} (of the figure kind {job.runner}) cannot be read ({exc})") from None

    def inside(path: str) -> str:
        return Path(path).relative_to(srcdir).as_posix()

    return replace(
        job, srcdir="", sources=sources, search_path=tuple(inside(p) for p in job.search_path),
        entry_path=inside(job.entry_path) if job.entry_path else None,
        inline_name=_relocated(job.inline_name, inside) if job.inline_name else None,
    )


def materialise(job: Job, folder: Path) -> Job:
    """Write a portable job's files under ``folder`` and return the job as a local one."""
    folder = folder.resolve()

    def place(relative: str) -> Path:
        pure = PurePosixPath(relative)
        if pure.is_absolute() or ".." in pure.parts:
            raise PortableJobError(f"refusing the path {relative!r} in a job: it leaves the job's folder")
        return folder.joinpath(*pure.parts)

    for relative, text in (job.sources or {}).items():
        target = place(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
    search_path = tuple(str(place(p)) for p in job.search_path)
    for path in search_path:
        Path(path).mkdir(parents=True, exist_ok=True)
    return replace(
        job, sources=None, srcdir=str(folder), search_path=search_path,
        entry_path=str(place(job.entry_path)) if job.entry_path else None,
        inline_name=_relocated(job.inline_name, lambda doc: str(place(doc))) if job.inline_name else None,
    )


def _relocated(inline_name: str, move: Callable[[str], str]) -> str:
    """``page.md:LINE`` with the page's path moved by ``move``."""
    doc, _, line = inline_name.rpartition(":")
    return f"{move(doc)}:{line}"
