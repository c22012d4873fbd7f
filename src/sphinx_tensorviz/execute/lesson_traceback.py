"""What an author reads when their code raises: their own frames first, the libraries' folded, and
no path of the build machine.

A PyTorch error is raised deep in the library (``F.linear`` inside ``linear.py``, called through
``module.py``'s call machinery), so the last lines of a plain traceback, the ones a warning shows,
name only torch's files; the author's ``models/mlp.py:13`` scrolls out of sight. Here the frames
of the author's files (those inside the source folder, and inline code) are listed in call order,
followed by one line for the library frames (how many, and the innermost), then the exception. The
innermost author frame is the failure's location, and the message starts with it. Every path is
relative: an author's to the source folder, a library's to the ``sys.path`` folder it was imported
from; the error box and the failure record are published and committed, so the build machine's
folders must not show in them.
"""

from __future__ import annotations

import sys
import sysconfig
import traceback
from dataclasses import dataclass
from pathlib import Path

#: the package's own frames (the worker, the runners, the capture): never the author's business
_PACKAGE = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class LessonError:
    """An exception of lesson code as the failure record keeps it."""

    message: str  #: ``models/mlp.py:13 in forward(): RuntimeError: ...`` (no location: no author frame)
    traceback: str


def lesson_error(exc: BaseException, srcdir: str, inline_name: str | None) -> LessonError:
    """The message and traceback of ``exc`` for a job whose project is ``srcdir`` (``inline_name``: the
    file name inline code was compiled with, ``page.md:LINE``)."""
    paths = _Paths(srcdir, inline_name)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not paths.is_package(f.filename)]
    author = [f for f in frames if paths.is_author(f.filename)]
    library = [f for f in frames if not paths.is_author(f.filename)]
    error = project_relative(f"{type(exc).__name__}: {exc}", srcdir)
    if author:  # the innermost author frame is where it failed
        where = author[-1]
        line = f" (code line {where.lineno})" if where.filename == inline_name else f":{where.lineno}"
        error = f"{paths.shown(where.filename)}{line} in {where.name}(): {error}"
    shown = author or library  # with no author frame at all, the libraries' are all there is to show
    for frame in shown:  # the source lines were read when the frames were extracted
        frame.filename = paths.shown(frame.filename)
    lines = ["Traceback (your code first, most recent call last):\n" if author else
             "Traceback (most recent call last):\n", *traceback.format_list(shown)]
    if author and library:
        innermost = library[-1]
        lines.append(f"  [{len(library)} library frame{'s' if len(library) > 1 else ''} folded; innermost: "
                     f"{paths.shown(innermost.filename)}, line {innermost.lineno}, in {innermost.name}]\n")
    lines += [project_relative(line, srcdir) for line in traceback.format_exception_only(type(exc), exc)]
    return LessonError(error, "".join(lines))


def project_relative(text: str, srcdir: str) -> str:
    """``text`` with the source folder's path taken out of every path inside it."""
    if not srcdir:
        return text
    root = str(Path(srcdir).resolve())
    return text.replace(root + "/", "").replace(root, ".")


class _Paths:
    """Which frames are whose, and how their files are named."""

    def __init__(self, srcdir: str, inline_name: str | None) -> None:
        self.root = Path(srcdir).resolve() if srcdir else None
        self.inline_name = inline_name
        # a course-local virtual environment lives inside the source folder: its files are libraries
        installed = {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
        installed.update(p for p in sys.path if {"site-packages", "dist-packages"} & set(Path(p).parts))
        self.libraries = [Path(p).resolve() for p in installed if p]
        self.search = sorted((Path(p).resolve() for p in sys.path if p), key=lambda p: len(p.parts), reverse=True)

    def is_package(self, filename: str) -> bool:
        return _inside(filename, [_PACKAGE])

    def is_author(self, filename: str) -> bool:
        if filename == self.inline_name:
            return True
        return (self.root is not None and _inside(filename, [self.root])
                and not _inside(filename, self.libraries))

    def shown(self, filename: str) -> str:
        """An author's file relative to the source folder (inline code: ``page.md:LINE``); a library's
        as it was imported, relative to the innermost ``sys.path`` folder that holds it; a name that
        is not a path (``<frozen ...>``) as it is."""
        if self.inline_name is not None and filename == self.inline_name:
            page, _, line = filename.rpartition(":")
            return f"{self.shown(page)}:{line}"
        path = Path(filename)
        if not path.is_absolute():
            return filename
        resolved = path.resolve()
        if self.root is not None and self.is_author(filename):
            return resolved.relative_to(self.root).as_posix()
        folder = next((f for f in self.search if resolved.is_relative_to(f)), None)
        return resolved.relative_to(folder).as_posix() if folder is not None else path.name


def _inside(filename: str, folders: list[Path]) -> bool:
    if not filename or filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return any(path.is_relative_to(folder) for folder in folders)
