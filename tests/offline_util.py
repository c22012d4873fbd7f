"""Builds as Read the Docs runs them: no framework importable, nothing executed.

Read the Docs installs neither PyTorch nor JAX (``.readthedocs.yaml``), and a committed course must
build there from its artifacts. :data:`WITHOUT_FRAMEWORKS` is a prelude for ``python -c`` that makes
the frameworks (and what only runs with them) unimportable in the build process and in anything it
starts, then runs ``sphinx-build`` with the remaining arguments.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import store_dir

WITHOUT_FRAMEWORKS = """
import importlib.abc, sys
BLOCKED = {"torch", "jax", "jaxlib", "flax", "equinox", "transformers", "safetensors"}
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (not installed on Read the Docs)")
        return None
sys.meta_path.insert(0, NotInstalled())
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""


def cache_only_build_without_weights(built_srcdir: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    """A copy of a built project, its trainings' weights deleted, built ``-W`` in cache-only mode
    with no framework importable: (the finished process, the HTML folder)."""
    srcdir = tmp_path / "src"
    shutil.copytree(built_srcdir, srcdir, ignore=shutil.ignore_patterns("_build"))
    shutil.rmtree(store_dir(srcdir) / "weights")
    out = tmp_path / "html"
    done = subprocess.run([sys.executable, "-c", WITHOUT_FRAMEWORKS, "-W", "-b", "html", "-D",
                           "tensorviz_execution_mode=cache-only", str(srcdir), str(out)],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    return done, out
