"""Where a figure kind that a course declares itself lives, so that its worker entry can be imported.

A kind installed like this package is importable by every worker that has it installed. A kind kept
in the course's folder (a package beside ``conf.py``, or in a folder ``conf.py`` puts on the build's
``sys.path``, such as ``_ext/``) is importable in the build only, because ``conf.py`` ran there: so a
job names the folder that holds it in its search path (:func:`~.phase.job_for`), and a job that runs
on a machine without the course's folder (Dask) carries its files (:func:`~.portable.portable_job`).
Found by import spec from the build, where the extension is imported; nothing is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

from ..core.request import package_files


@dataclass(frozen=True)
class CourseKind:
    """The top-level package (or module) of a kind's worker entry, found inside the course's folder."""

    folder: Path  #: the folder that holds it: what the worker puts on ``sys.path``
    files: dict[str, Path]  #: its ``.py`` and ``.json`` files, by path relative to the course's folder


def course_kind(runner: str, srcdir: Path) -> CourseKind | None:
    """Where the package of ``runner`` (``module:function``) is, when it is in ``srcdir``; ``None`` for
    this package's kinds and for kinds installed elsewhere."""
    top = runner.partition(":")[0].split(".")[0]
    if not top or top == __name__.split(".")[0]:
        return None
    try:
        spec = find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        return None
    origin, root = Path(spec.origin).resolve(), srcdir.resolve()
    folder = origin.parent.parent if spec.submodule_search_locations is not None else origin.parent
    if not folder.is_relative_to(root):
        return None
    files = {path.resolve().relative_to(root).as_posix(): path for path in package_files(top).values()
             if path.resolve().is_relative_to(root)}
    return CourseKind(folder, files)
