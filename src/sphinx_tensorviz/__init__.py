"""sphinx-tensorviz: executed, cached and accessible neural-network figures for Sphinx.

Add ``"sphinx_tensorviz"`` to ``extensions`` in ``conf.py``. Lesson code runs
once, outside Sphinx, and is stored as a committed artifact named by the hash of
everything that affects it.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def setup(app: Any) -> dict[str, Any]:
    from .extension import setup_extension

    return {"version": __version__, **setup_extension(app)}
