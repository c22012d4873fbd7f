"""The features: one package each (``heatmap``, ``graph`` with its sub-features ``tour`` and
``activations``, ``diagram``, ``lesson``, ``downloads``, ``report``), each with a ``setup_<name>(app)``
that the Sphinx glue calls.

A figure kind owns its directive (on ``read/``'s base classes), its nodes, its drawing (on
``render/``'s primitives), its worker entry and everything else the stages ask of it, declared once
as a :class:`~sphinx_tensorviz.core.kinds.FigureKind`. Features import the stages and ``core/``,
never each other; a sub-feature may import its parent (``tests/test_architecture.py``).
"""

from __future__ import annotations

import importlib
import pkgutil


def declare_builtin_kinds() -> None:
    """Import every feature package, so each declares its figure kind: what a process that sets up no
    Sphinx application (``tensorviz push``, a test) needs before it reads artifacts."""
    importlib.import_module("sphinx_tensorviz.core.sweep")  # the cross-sweep check's kind
    importlib.import_module("sphinx_tensorviz.core.frameworks")  # the frameworks' comparison and shared weights
    for found in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{found.name}")
