"""What the limits of issue 13 save: artifact size, page size and build time of hostile results.

Builds small projects with ``python -m sphinx -b html -q`` in fresh processes, each in a temporary
folder, and prints sizes and wall times with ratios against a baseline measured in the same run:

* ``big``: ``np.random.rand(2000, 2000)`` with the default limits (refused), against the same code at
  ``--side`` x ``--side`` with the limits raised so it is stored and drawn (the cost the limits
  avoid, per cell, extrapolated to 2000 x 2000);
* ``chatty``: lesson code printing ``--print-mb`` MB with the default ``tensorviz_max_stdout_kb``,
  against the same with the limit raised above it;
* ``holder``: code that starts ``sleep 301`` (holding the worker's output) and returns, against the
  same code without the child (it used to wait for ``tensorviz_timeout``).

Usage: ``python bench/bench_hostile.py [--side 300] [--print-mb 5]``; under a minute on two cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONF = '''project = "bench"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_timeout = 120
'''


def build(tmp: Path, name: str, code: str, conf_extra: str = "") -> dict[str, float]:
    """Build a one-page project; return wall time, artifact bytes (store total) and page bytes."""
    src = tmp / name
    src.mkdir()
    (src / "conf.py").write_text(CONF + conf_extra)
    (src / "index.md").write_text(f"# Bench\n\n```{{tv-heatmap}}\n:title: Bench\n\n{code}\n```\n")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_build")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    store = src / "tensorviz_artifacts"
    stored = sum(p.stat().st_size for p in store.glob("*.json")) if store.is_dir() else 0
    return {"seconds": seconds, "artifact": stored, "page": (src / "_build" / "index.html").stat().st_size}


def show(label: str, found: dict[str, float]) -> None:
    print(f"  {label:<44} {found['seconds']:7.2f} s  artifact {found['artifact'] / 1e6:9.3f} MB  "
          f"page {found['page'] / 1e6:9.3f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=300)
    parser.add_argument("--print-mb", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        print("big result")
        limited = build(tmp, "big", "import numpy as np\n\nresult = np.random.rand(2000, 2000)")
        side = args.side
        unlimited = build(tmp, "big-baseline", f"import numpy as np\n\nresult = np.random.rand({side}, {side})",
                          "tensorviz_max_heatmap_cells = 10**9\ntensorviz_max_result_mb = 10**4\n")
        show("2000 x 2000, default limits (refused)", limited)
        show(f"{side} x {side}, limits raised (baseline)", unlimited)
        scale = 2000 * 2000 / (side * side)
        print(f"  baseline extrapolated to 2000 x 2000: artifact {unlimited['artifact'] * scale / 1e6:.0f} MB, "
              f"page {unlimited['page'] * scale / 1e6:.0f} MB")
        print(f"  ratio limited/extrapolated: artifact {limited['artifact'] / (unlimited['artifact'] * scale):.5f}, "
              f"page {limited['page'] / (unlimited['page'] * scale):.5f}")

        print("printed output")
        chars = int(args.print_mb * 1e6)
        code = f"import sys\nimport numpy as np\n\nsys.stdout.write('x' * {chars})\nresult = np.eye(2)"
        capped = build(tmp, "chatty", code)
        uncapped = build(tmp, "chatty-baseline", code, f"tensorviz_max_stdout_kb = {chars // 1000 + 10}\n")
        show(f"{args.print_mb:g} MB printed, default 64 KB kept", capped)
        show(f"{args.print_mb:g} MB printed, all kept (baseline)", uncapped)
        print(f"  ratio capped/baseline: artifact {capped['artifact'] / uncapped['artifact']:.4f}, "
              f"page {capped['page'] / uncapped['page']:.4f}")

        print("a child that holds the worker's output")
        holder = build(tmp, "holder", "import subprocess\nimport numpy as np\n\n"
                                      "subprocess.Popen(['sleep', '301'])\nresult = np.eye(2)")
        plain = build(tmp, "holder-baseline", "import numpy as np\n\nresult = np.eye(2)")
        show("with a sleep 301 child", holder)
        show("without it (baseline)", plain)
        print(f"  ratio: {holder['seconds'] / plain['seconds']:.2f} (it used to wait for tensorviz_timeout, 120 s)")


if __name__ == "__main__":
    main()
