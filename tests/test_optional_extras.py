"""The remote store and the Dask executor are optional extras: without fsspec, s3fs, aiohttp, dask and
distributed the default build works, and asking for them says which extra to install."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SUMMARY, copy_root
from offline_util import WITHOUT_FRAMEWORKS

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


#: what a source checkout needs to build the package (the rest of the repository is not packaged)
PACKAGING = ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", "setup.cfg", "src")
REPO = Path(__file__).resolve().parents[1]


def tutorial_install_commands() -> list[str]:
    """The bash blocks of the tutorial's first step, as written: install from the checkout, then the wheel."""
    text = (REPO / "docs" / "tutorial.md").read_text("utf-8")
    step = text.split("## 1.", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", step, re.S)


def test_the_tutorials_install_from_the_repository_works_in_clean_environments(tmp_path: Path) -> None:
    """There is no PyPI release: the tutorial installs from a checkout, or through a wheel built from it.

    Each bash block of its first step runs as written (``bash -e``) in a new virtual environment
    without this one's packages, in a folder beside a copy of the checkout (so the worktree gets no
    ``build/`` folder); ``PIP_CONSTRAINT`` pins what ``constraints.txt`` pins, and dependencies
    come from the package index or pip's cache. The wheel's environment then builds the course
    from its committed artifacts with ``-W``, importing the package from the wheel.
    """
    checkout = tmp_path / "sphinx-tensorviz"
    checkout.mkdir()
    for name in PACKAGING:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif source.is_file():
            shutil.copy2(source, checkout / name)
    blocks = tutorial_install_commands()
    assert len(blocks) == 2 and "pip wheel" in blocks[1], blocks
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    base["PIP_CONSTRAINT"] = str(REPO / "constraints.txt")

    def run(command: list[str | Path], venv: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
        env = {**base, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{base.get('PATH', '')}"}
        done = subprocess.run([str(c) for c in command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, f"{command}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    for number, block in enumerate(blocks):
        venv = tmp_path / f"venv{number}"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        run(["bash", "-e", "-c", block], venv)
        shown = run(["python", "-c", "import sphinx_tensorviz, sys; print(sphinx_tensorviz.__file__, sys.prefix)"],
                    venv)
        where, prefix = shown.stdout.split()
        assert Path(where).is_relative_to(venv) and Path(prefix) == venv, shown.stdout
        run(["tensorviz", "--version"], venv)
    isolated = subprocess.run([str(venv / "bin" / "python"), "-c", "import torch"], capture_output=True, cwd=tmp_path)
    assert isolated.returncode != 0, "a clean environment must not see this one's packages"

    course = tmp_path / "lessons"
    shutil.copytree(REPO / "lessons", course, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    base.update(TENSORVIZ_MODE="cache-only", XDG_CACHE_HOME=str(tmp_path / "cache"))
    built = run(["sphinx-build", "-W", "-b", "html", course, tmp_path / "html"], venv)
    executed, cached, failed = SUMMARY.search(built.stdout).groups()
    assert (executed, failed) == ("0", "0") and int(cached) > 10, built.stdout[-2000:]
    assert (tmp_path / "html" / "_static" / "tensorviz" / "tensorviz.css").is_file()
    assert "tv-figure" in (tmp_path / "html" / "attention-scores.html").read_text("utf-8")
