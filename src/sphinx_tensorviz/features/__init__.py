"""The figure kinds: one package each (``heatmap``, ``graph``, ``diagram``, ``tour``, ``activations``,
``lesson``, ``downloads``, ``report``), each with a ``setup_<kind>(app)`` that the Sphinx glue calls.

A feature owns its directive (on ``read/``'s base classes), its nodes, its drawing (on
``render/``'s primitives) and its worker entry (named in ``core.protocol.RUNNERS``). Features
import the stages and ``core/``, never each other (``tests/test_architecture.py``).
"""
