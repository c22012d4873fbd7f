"""A failure caused by the environment is retried once the environment changes.

The workers run in a real, separate virtual environment (``tensorviz_python``) that sees this
one's packages. The lesson imports a package that is not installed: the failure is recorded
and not retried while nothing changes; after the package is installed into that environment
(a module and its ``dist-info``, as pip leaves them) the same, unchanged code runs again.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import run_sphinx
from sphinx_tensorviz.cli import main

pytestmark = pytest.mark.sphinx

PAGE = """\
# Needs a package

```{tv-heatmap}
:alt: A grid from a package that may not be installed.

import tvretry_grid

result = tvretry_grid.grid()
```
"""


@pytest.fixture
def worker_env(tmp_path: Path) -> Path:
    """A virtual environment whose Python sees this one's packages (sphinx-tensorviz, NumPy)."""
    home = tmp_path / "workers"
    venv.EnvBuilder(with_pip=False).create(home)
    python = home / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "outer.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in ours) + "\n", "utf-8")
    return python


def install_package(python: Path) -> None:
    """What ``pip install`` leaves behind for a one-module distribution."""
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "tvretry_grid.py").write_text("def grid():\n    return [[1.0, 2.0], [3.0, 4.0]]\n", "utf-8")
    info = purelib / "tvretry_grid-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tvretry-grid\nVersion: 1.0\n", "utf-8")


def project(tmp_path: Path, python: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "sphinx_tensorviz"]\n'
                                 f"tensorviz_python = {str(python)!r}\n", "utf-8")
    (src / "index.md").write_text(PAGE, "utf-8")
    return src


def failure_record(src: Path) -> dict:
    (path,) = (src / "tensorviz_artifacts" / "failures").glob("*.json")
    return json.loads(path.read_text("utf-8"))


def test_an_environment_failure_is_retried_after_the_environment_changes(
        tmp_path: Path, worker_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = project(tmp_path, worker_env)
    first = run_sphinx(src)
    assert first.summary == (1, 0, 1)
    assert "No module named 'tvretry_grid'" in first.warnings
    recorded = failure_record(src)
    assert len(recorded["environment"]) == 64  # the worker environment's fingerprint

    again = run_sphinx(src)
    assert again.summary == (0, 0, 1), "nothing changed: the recorded failure stands"

    install_package(worker_env)
    capsys.readouterr()
    assert main(["status", str(src)]) == 0
    assert "will be retried: the Python environment changed since it failed" in capsys.readouterr().out

    fixed = run_sphinx(src)
    assert fixed.summary == (1, 0, 0)
    assert fixed.tensorviz_warnings() == []
    assert not list((src / "tensorviz_artifacts" / "failures").glob("*.json"))


def test_retry_failed_runs_recorded_failures_on_demand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = project(tmp_path, Path(sys.executable))
    assert main(["execute", str(src)]) == 1
    first = failure_record(src)
    capsys.readouterr()
    assert main(["execute", str(src)]) == 1
    assert "0 executed" in capsys.readouterr().out and failure_record(src) == first  # not retried
    assert main(["execute", str(src), "--retry-failed"]) == 1
    captured = capsys.readouterr()
    assert "tensorviz: 1 executed, 0 cached, 1 failed" in captured.err  # it ran again, and failed again
    assert "1 failed" in captured.out
    assert failure_record(src)["recordedAt"] != first["recordedAt"]
