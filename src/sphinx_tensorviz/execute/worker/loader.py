"""Loading and calling lesson code: the one implementation the worker runs and ``run.py`` copies.

``run.py`` (the "reproduce this figure" script, :mod:`.reproduce`) must load and call the
lesson's code exactly as the worker did, on a machine without this package: its generator
copies the source of these definitions into the script. So they use the standard library
only, and nothing here may refer to another module of the package.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the annotation only: ``run.py``'s copies refer to nothing of the package
    from ...core.protocol import Job


class BadResult(ValueError):
    """The lesson code ran (or was looked for) but cannot give what the directive shows."""


def import_file(path: Path, name: str) -> types.ModuleType:
    """Import the file at ``path`` as a fresh module ``name`` (registered in ``sys.modules``, as
    dataclasses and pickling in lesson code expect)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None or not Path(path).is_file():
        raise BadResult(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_inline(code: str, filename: str) -> types.ModuleType:
    """Run code written in a directive's body as a fresh module; tracebacks name ``filename``."""
    module = types.ModuleType("tensorviz_lesson")
    module.__file__ = filename
    exec(compile(code, filename, "exec"), module.__dict__)  # noqa: S102 - lesson code, in its own process
    return module


def seeded_arguments(function: Any, kwargs: dict[str, Any], seed: int, backend: str,
                     key: bool = True) -> dict[str, Any]:
    """``kwargs`` plus ``seed`` (and, for JAX code and when ``key``, a ``key`` made from it) where
    ``function`` takes them and the author did not give them."""
    params = inspect.signature(function).parameters
    kwargs = dict(kwargs)
    if "seed" in params:
        kwargs.setdefault("seed", seed)
    if key and "key" in params and "key" not in kwargs and backend == "jax":
        import jax

        kwargs["key"] = jax.random.PRNGKey(seed)
    return kwargs


def lesson_value(module: types.ModuleType, job: Job) -> Any:
    """What the lesson computed: its module-level ``result``, or the function the job names called with
    the author's inputs (plus ``seed``/``key`` if it asks for them). Every kind's worker entry starts
    here, so a figure kind from outside the package reads lesson code as the package's kinds do."""
    if not job.function:
        if "result" not in module.__dict__:
            raise BadResult("the code defines no 'result' variable; name a function with :function:")
        return module.__dict__["result"]
    function = getattr(module, job.function, None)
    if not callable(function):
        raise BadResult(f"no function named {job.function!r} in {job.entry}")
    inputs = job.inputs if isinstance(job.inputs, dict) else {}
    return function(**seeded_arguments(function, inputs, job.seed, job.backend))
