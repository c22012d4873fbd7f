"""Shared by the execution benches: temporary projects built from the course, and a timed build.

Not a benchmark itself. ``seed_lessons`` copies the two seed lessons (transformers-03 and
llama-decoder) with their models but without artifacts; ``heatmaps_project`` writes one page
with ``count`` small PyTorch heatmaps (``torch.randn(4, 8)``, one seed each).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LESSONS = REPO / "lessons"
SEEDS = ("transformers-03", "llama-decoder")
#: a ``tv-*`` block, fenced by backticks or colons (nested blocks use a longer outer fence)
DIRECTIVE_BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{tv-[a-z-]+\}.*?^(?P=fence)[ \t]*$", re.M | re.S)
CONF = '''\
project = "bench"
extensions = ["myst_parser", "sphinx_tensorviz"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 300
'''


def seed_lessons(dest: Path, extra_conf: str = "") -> Path:
    """The two seed lessons as a project of their own (no artifacts: everything executes)."""
    shutil.copytree(LESSONS, dest, ignore=shutil.ignore_patterns("_build", "tensorviz_artifacts", "__pycache__"))
    for page in dest.glob("*.md"):
        if page.stem not in SEEDS:
            page.unlink()
    (dest / "index.md").write_text("# Bench\n\n```{toctree}\n" + "\n".join(SEEDS) + "\n```\n", "utf-8")
    with open(dest / "conf.py", "a", encoding="utf-8") as conf:
        conf.write("\ntensorviz_execution_mode = 'auto'\n" + extra_conf)
    return dest


def heatmaps_project(dest: Path, count: int = 20, extra_conf: str = "") -> Path:
    """One page with ``count`` PyTorch heatmaps of ``torch.randn(4, 8)``."""
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(CONF + extra_conf, "utf-8")
    figures = "\n".join(
        f"```{{tv-heatmap}}\n:backend: torch\n:seed: {n}\n:title: Random matrix {n}\n\n"
        f"import torch\n\nresult = torch.randn(4, 8)\n```\n" for n in range(count))
    (dest / "index.md").write_text(f"# {count} heatmaps\n\n{figures}", "utf-8")
    return dest


def user_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a build as an author runs it: Python writes its bytecode caches.

    Some machines set ``PYTHONDONTWRITEBYTECODE`` (this workplace does); then every build compiles
    the extension's modules from source again, a cost no author pays, and one that would be
    charged to the extension alone (the plain build's packages were compiled when installed).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **(extra or {})}


def build(project: Path, out: Path, env: dict[str, str] | None = None) -> float:
    """Seconds of one ``python -m sphinx -b html -q`` (fails loudly on a warning or error)."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(out / "doctrees"), str(project),
           str(out / "html")]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=user_environment(env))
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or "ERROR" in done.stderr or "tensorviz." in done.stderr:
        raise SystemExit(f"build of {project} failed or warned:\n{done.stdout}\n{done.stderr}")
    return elapsed


def fresh(*folders: Path) -> None:
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
