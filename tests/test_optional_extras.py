"""The remote store and the Dask executor are optional extras: without fsspec, s3fs, aiohttp, dask and
distributed the default build works, and asking for them says which extra to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SUMMARY, copy_root
from test_course import WITHOUT_FRAMEWORKS

pytestmark = pytest.mark.sphinx

#: the course tests' prelude (packages made unimportable in the build process), blocking the extras
BLOCKED = '{"fsspec", "s3fs", "gcsfs", "adlfs", "aiohttp", "botocore", "aiobotocore", "dask", "distributed"}'
WITHOUT_EXTRAS = re.sub(r"BLOCKED = \{[^}]*\}", lambda _: f"BLOCKED = {BLOCKED}", WITHOUT_FRAMEWORKS)
assert WITHOUT_EXTRAS != WITHOUT_FRAMEWORKS


def build_without_extras(src: Path, *defines: str) -> subprocess.CompletedProcess[str]:
    args = [a for d in defines for a in ("-D", d)]
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, "-b", "html", *args, str(src), str(src / "_build")],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)


def test_the_default_build_needs_no_extra(tmp_path: Path) -> None:
    src = copy_root("cli", tmp_path / "cli")
    done = build_without_extras(src)
    assert done.returncode == 0, done.stderr
    assert SUMMARY.search(done.stdout).groups() == ("2", "0", "0")
    assert "WARNING" not in done.stderr
    assert len(list((src / "tensorviz_artifacts").glob("*.json"))) == 2


def test_asking_for_a_missing_extra_names_it_and_builds_locally(tmp_path: Path) -> None:
    src = copy_root("cli", tmp_path / "cli")
    done = build_without_extras(src, "tensorviz_artifact_store=s3://bucket/course", "tensorviz_executor=dask-local")
    assert done.returncode == 0, done.stderr
    assert "tensorviz_artifact_store = 's3://bucket/course' cannot be opened" in done.stderr
    assert "pip install 'sphinx-tensorviz[s3]'" in done.stderr
    assert "tensorviz_executor = 'dask-local' needs Dask's distributed package" in done.stderr
    assert "[tensorviz.config]" in done.stderr
    assert SUMMARY.search(done.stdout).groups() == ("2", "0", "0")  # locally, into tensorviz_artifact_dir
    assert len(list((src / "tensorviz_artifacts").glob("*.json"))) == 2
