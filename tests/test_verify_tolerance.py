"""``tensorviz verify`` compares re-runs within what each value's dtype can reproduce.

A bit-exact check fails on any CPU but the recording one (float32 kernels differ in the last
bits); a check loose enough to pass when the numbers really moved is a bug. Both are tested
here on real executions: a PyTorch float32, a NumPy float64 and a NumPy integer heatmap.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sphinx_tensorviz.cli import main
from sphinx_tensorviz.cli.verify import compare
from sphinx_tensorviz.execute.tolerance import default_tolerance, within

PAGE = """\
# Three dtypes

```{tv-heatmap}
:backend: torch
:alt: float32 values from PyTorch.

import torch

torch.manual_seed(0)
result = torch.randn(3, 4) * 10
```

```{tv-heatmap}
:alt: float64 values from NumPy.

import numpy as np

result = np.random.default_rng(1).normal(size=(3, 4)) * 10
```

```{tv-heatmap}
:alt: integer counts from NumPy.

import numpy as np

result = np.arange(12, dtype=np.int64).reshape(3, 4) * 7
```
"""

CONF = 'extensions = ["myst_parser", "sphinx_tensorviz"]\ntensorviz_workers = 2\n'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the three figures executed once (the store is then copied per test)."""
    src = tmp_path_factory.mktemp("dtypes") / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF, "utf-8")
    (src / "index.md").write_text(PAGE, "utf-8")
    assert main(["execute", str(src)]) == 0
    return src


def by_dtype(src: Path) -> dict[str, Path]:
    found = {}
    for path in (src / "tensorviz_artifacts").glob("*.json"):
        found[json.loads(path.read_text("utf-8"))["data"]["dtype"]] = path
    return found


def run_verify(src: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(src), *extra])
    return code, capsys.readouterr().out


@pytest.mark.sphinx
def test_each_artifact_records_the_dtype_it_was_computed_in(recorded: Path) -> None:
    assert set(by_dtype(recorded)) == {"float32", "float64", "int64"}


@pytest.mark.sphinx
def test_verify_reports_dtype_and_tolerance_and_passes_unchanged(recorded: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_verify(recorded, capsys)
    assert code == 0, out
    assert "3 of 3 artifacts reproduced" in out
    assert "12 float32 values in data.values within rtol=6.1e-05" in out
    assert "12 float64 values in data.values within rtol=1.1e-13" in out
    assert "12 int64 values in data.values within rtol=0, atol=0" in out


@pytest.mark.sphinx
@pytest.mark.parametrize(("dtype", "move"), [
    ("float32", lambda v: v * (1 + 1e-3)),   # a float32 value moved by 1e-3 relative
    ("float64", lambda v: v * (1 + 1e-9)),   # a float64 value moved by 1e-9 relative
    ("int64", lambda v: v + 1),              # an integer moved by 1
])
def test_a_moved_value_is_a_mismatch(recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     dtype: str, move) -> None:
    src = shutil.copytree(recorded, tmp_path / "src", ignore=shutil.ignore_patterns("failures"))
    path = by_dtype(src)[dtype]
    artifact = json.loads(path.read_text("utf-8"))
    values = artifact["data"]["values"]
    row, col = 1, 2  # a non-zero value in each of the three figures
    assert values[row][col] != 0
    values[row][col] = move(values[row][col])
    path.write_text(json.dumps(artifact, indent=2) + "\n", "utf-8")
    code, out = run_verify(src, capsys)
    assert code == 1, out
    assert "2 of 3 artifacts reproduced, 1 did not" in out
    assert f"data.values[{row}][{col}]" in out and f"for {dtype})" in out
    # an explicit tolerance still overrides the dtype's
    code, out = run_verify(src, capsys, "--rtol", "1e-2", "--atol", "2")
    assert code == 0, out


@pytest.mark.sphinx
def test_an_artifact_without_a_recorded_dtype_is_compared_as_float32(recorded: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    src = shutil.copytree(recorded, tmp_path / "src", ignore=shutil.ignore_patterns("failures"))
    path = by_dtype(src)["float64"]
    artifact = json.loads(path.read_text("utf-8"))
    del artifact["data"]["dtype"]  # as recorded before dtypes were stored
    path.write_text(json.dumps(artifact, indent=2) + "\n", "utf-8")
    code, out = run_verify(src, capsys)
    assert code == 0, out
    assert "12 float32 values in data.values within rtol=6.1e-05" in out
    assert "(dtype not recorded: compared as float32)" in out


# -- the rule itself, without executions --------------------------------------------------------

def test_float32_allows_last_bit_noise_at_the_largest_magnitude_but_not_real_moves() -> None:
    rtol, atol = default_tolerance("float32", 10.0)
    # the measured cross-CPU differences: 1.4e-6 to 2.9e-6 at magnitudes near 10, also on small
    # values that are differences of the large ones
    assert within(10.0, 10.0 + 2.9e-6, rtol, atol)
    assert within(0.01, 0.01 + 2.9e-6, rtol, atol)
    assert not within(10.0, 10.0 * (1 + 1e-3), rtol, atol)
    assert not within(0.5, 0.5 * (1 + 1e-3), rtol, atol)


def test_integers_are_exact_and_float64_is_much_tighter_than_float32() -> None:
    assert default_tolerance("int32", 100.0) == (0.0, 0.0)
    assert default_tolerance("bool", 1.0) == (0.0, 0.0)
    r32, a32 = default_tolerance("float32", 1.0)
    r64, a64 = default_tolerance("float64", 1.0)
    assert r64 < r32 * 1e-8 and a64 < a32 * 1e-8
    assert default_tolerance("complex64", 1.0) == default_tolerance("float32", 1.0)


def test_graph_structure_stays_exact_whatever_the_dtype() -> None:
    stored = {"data": {"kind": "graph", "layers": [{"id": "a"}, {"id": "b"}],
                       "connections": [{"source": "a", "target": "b"}],
                       "output": {"shape": [2], "dtype": "float32", "values": [1.0, 2.0]}}}
    same = {"data": {**stored["data"], "output": {"shape": [2], "values": [1.0 + 1e-7, 2.0]}}}
    assert compare(stored, same).problems == []
    assert compare(stored, same).compared == 2
    rewired = {"data": {**same["data"], "connections": [{"source": "b", "target": "a"}]}}
    assert any("connections" in p for p in compare(stored, rewired).problems)
