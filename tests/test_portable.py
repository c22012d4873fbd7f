"""Jobs that carry their lesson files (for Dask workers without the course): what travels, and what is
refused. Real files in a temporary folder; the job documents are those a build makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sphinx_tensorviz.execute.portable import PortableJobError, materialise, portable_job
from sphinx_tensorviz.core.hashing import sha256_text


def course(root: Path) -> dict:
    (root / "models").mkdir(parents=True)
    (root / "helpers").mkdir()
    files = {"models/grid.py": "from helpers.scale import k\n", "helpers/scale.py": "k = 2\n",
             "helpers/__init__.py": ""}
    for relative, text in files.items():
        (root / relative).write_text(text, "utf-8")
    return {"directive": "tv-heatmap", "backend": "numpy", "entry": "models/grid.py", "srcdir": str(root),
            "files": {k: sha256_text(v) for k, v in files.items()}, "entryPath": str(root / "models/grid.py"),
            "searchPath": [str(root / "models"), str(root)]}


def test_a_job_travels_without_paths_and_lands_in_its_own_folder(tmp_path: Path) -> None:
    job = course(tmp_path / "course")
    carried = portable_job(job)
    assert str(tmp_path) not in repr(carried)  # no absolute path of the building machine
    assert carried["sources"]["helpers/scale.py"] == "k = 2\n" and len(carried["sources"]) == 3
    local = materialise(carried, tmp_path / "elsewhere")
    assert Path(local["entryPath"]).read_text("utf-8") == "from helpers.scale import k\n"
    assert local["searchPath"] == [str((tmp_path / "elsewhere" / "models").resolve()),
                                   str((tmp_path / "elsewhere").resolve())]
    assert (tmp_path / "elsewhere" / "helpers" / "__init__.py").is_file()


def test_a_file_changed_since_the_build_read_it_is_not_sent(tmp_path: Path) -> None:
    job = course(tmp_path / "course")
    (tmp_path / "course" / "helpers" / "scale.py").write_text("k = 3\n", "utf-8")
    with pytest.raises(PortableJobError, match="helpers/scale.py changed since the build read it"):
        portable_job(job)


@pytest.mark.parametrize("relative", ["../escape.py", "/etc/cron.d/job", "a/../../escape.py"])
def test_a_job_cannot_write_outside_its_folder(tmp_path: Path, relative: str) -> None:
    carried = {"sources": {relative: "print('hi')\n"}, "searchPath": ["."], "entryPath": relative}
    with pytest.raises(PortableJobError, match="leaves the job's folder"):
        materialise(carried, tmp_path / "job")
    assert not (tmp_path / "escape.py").exists()
