"""A language model, its token inputs and their labels, from a job (in the worker).

Shared by the kinds that run a model over token ids (``tv-attention``, ``tv-lens``, ``tv-patch``): :func:`build_model`
is the one place a model reference is resolved: ``file.py:factory`` in the lesson's module, with a
recorded training run's weights loaded for ``:model: @name`` (:func:`.trained.model_factory`), so that
every other part of a kind stays as it is.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Any

from ...core.protocol import Job
from .inputs import InputSpecError, build_call
from .loader import BadResult, import_file, seeded_arguments
from .trained import model_factory


def build_model(module: types.ModuleType, job: Job) -> Any:
    """The model the job's ``:model:`` names, built with ``:model-args:`` (and the seed, if the factory
    takes one; never a JAX key: its parameters are the model's own business)."""
    factory = model_factory(module, job)  # loads a training's weights for ``:model: @name``
    kwargs = seeded_arguments(factory, job.options.get("model_args") or {}, job.seed, job.backend, key=False)
    return factory(**kwargs)


def token_ids(options: dict[str, Any]) -> list[int] | None:
    """The token ids ``:inputs:`` gives as a list of integers (``None``: it gives input specs)."""
    given = options.get("inputs")
    return list(given) if isinstance(given, list) and given and all(isinstance(n, int) for n in given) else None


def model_call(options: dict[str, Any], backend: str, seed: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(positional, keyword) arguments of the forward pass: token ids as one batch row ``[1, T]``,
    or the input specs ``tv-graph`` takes; ``:call-args:`` are added as keywords."""
    ids = token_ids(options)
    specs = [{"shape": [1, len(ids)], "dtype": "int64" if backend == "torch" else "int32", "fill": "values",
              "values": [ids]}] if ids else options.get("inputs") or []
    try:
        args, kwargs = build_call(specs, backend, seed)
    except InputSpecError as exc:
        raise BadResult(f"bad :inputs: spec: {exc}") from None
    return args, {**kwargs, **(options.get("call_args") or {})}


def project_function(job: Job, reference: str, option: str) -> Any:
    """The function a ``file.py:function`` option names (the file relative to the course folder)."""
    where, _, name = reference.rpartition(":")
    function = getattr(import_file(Path(job.srcdir or ".") / where, f"tensorviz_{option}_{Path(where).stem}"),
                       name, None)
    if not callable(function):
        raise BadResult(f":{option}: no function named {name!r} in {where}")
    return function


def token_labels(job: Job, length: int, ids: list[int] | None = None) -> list[str]:
    """``:tokens:`` as given, or from ``file.py:function`` (called with ``ids`` if it takes them); else
    the token ids, or the positions. ``ids``: the labelled input (default: ``:inputs:``'s token ids)."""
    spec = job.options.get("tokens")
    ids = ids if ids is not None else token_ids(job.options)
    if isinstance(spec, str):
        where, _, name = spec.rpartition(":")
        function = project_function(job, spec, "tokens")
        takes_ids = "ids" in inspect.signature(function).parameters
        spec = function(ids=ids) if takes_ids else function()
        if not isinstance(spec, (list, tuple)):
            raise BadResult(f":tokens: {where}:{name} returned {type(spec).__name__}, not a list of strings")
    if spec is None:
        return [str(n) for n in ids] if ids else [str(n) for n in range(length)]
    return [str(label) for label in spec]
