"""Jobs that carry their lesson files (for Dask workers without the course): what travels, and what is
refused. Real files in a temporary folder; the job documents are those a build makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sphinx_tensorviz.core.hashing import sha256_text
from sphinx_tensorviz.core.protocol import Job
from sphinx_tensorviz.execute.portable import PortableJobError, materialise, portable_job
from sphinx_tensorviz.features.heatmap import KIND as HEATMAP


def course(root: Path) -> Job:
    (root / "models").mkdir(parents=True)
    (root / "helpers").mkdir()
    files = {"models/grid.py": "from helpers.scale import k\n", "helpers/scale.py": "k = 2\n",
             "helpers/__init__.py": ""}
    for relative, text in files.items():
        (root / relative).write_text(text, "utf-8")
    return Job("tv-heatmap", HEATMAP.run, "numpy", 0, None, {}, {}, "cpu", "models/grid.py", str(root),
               {k: sha256_text(v) for k, v in files.items()}, search_path=(str(root / "models"), str(root)),
               entry_path=str(root / "models/grid.py"))


def test_a_job_travels_without_paths_and_lands_in_its_own_folder(tmp_path: Path) -> None:
    job = course(tmp_path / "course")
    carried = portable_job(job)
    assert str(tmp_path) not in repr(carried.to_json())  # no absolute path of the building machine
    assert carried.sources["helpers/scale.py"] == "k = 2\n" and len(carried.sources) == 3
    local = materialise(Job.from_json(carried.to_json()), tmp_path / "elsewhere")  # as it travels
    assert Path(local.entry_path).read_text("utf-8") == "from helpers.scale import k\n"
    assert list(local.search_path) == [str((tmp_path / "elsewhere" / "models").resolve()),
                                       str((tmp_path / "elsewhere").resolve())]
    assert (tmp_path / "elsewhere" / "helpers" / "__init__.py").is_file()


def test_a_file_changed_since_the_build_read_it_is_not_sent(tmp_path: Path) -> None:
    job = course(tmp_path / "course")
    (tmp_path / "course" / "helpers" / "scale.py").write_text("k = 3\n", "utf-8")
    with pytest.raises(PortableJobError, match="helpers/scale.py changed since the build read it"):
        portable_job(job)


@pytest.mark.parametrize("relative", ["../escape.py", "/etc/cron.d/job", "a/../../escape.py"])
def test_a_job_cannot_write_outside_its_folder(tmp_path: Path, relative: str) -> None:
    carried = Job("tv-heatmap", HEATMAP.run, "numpy", 0, None, {}, {}, "cpu", relative, "", {},
                  search_path=(".",), entry_path=relative, sources={relative: "print('hi')\n"})
    with pytest.raises(PortableJobError, match="leaves the job's folder"):
        materialise(carried, tmp_path / "job")
    assert not (tmp_path / "escape.py").exists()
