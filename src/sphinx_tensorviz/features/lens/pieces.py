"""The model's pieces for the lens (in the worker): the blocks whose outputs are the residual stream,
the final norm and the unembedding, found by ``execute/worker/causal_lm.py``'s shared shape or named
by ``:residual:``, ``:final-norm:`` and ``:unembed:`` (a module path, or ``file.py:function`` taking
``(model, hidden)``)."""

from __future__ import annotations

from typing import Any

from ...core.protocol import Job
from ...execute.worker.causal_lm import NO_NORM, CausalLMParts, PartNames, PartsNotFound, find_parts
from ...execute.worker.lm_inputs import project_function
from ...execute.worker.loader import BadResult

#: which option names each piece, for the message when it is missing
OPTIONS = {"layers": ":residual:", "unembedding": ":unembed:", "norm": ":final-norm:"}


def _function(job: Job, model: Any, option: str) -> Any:
    """``file.py:function`` of the option as ``hidden -> value`` (the model bound), or ``None``."""
    reference = job.options.get(option.replace("-", "_"))
    if not isinstance(reference, str) or ":" not in reference:
        return None
    function = project_function(job, reference, option)
    return lambda hidden: function(model, hidden)


def _path(job: Job, option: str) -> str | None:
    reference = job.options.get(option.replace("-", "_"))
    return reference if isinstance(reference, str) and ":" not in reference and reference != "none" else None


def lens_parts(model: Any, job: Job) -> CausalLMParts:
    """The pieces, or a :class:`BadResult` that says which is missing and which option names it."""
    names = PartNames(residual=_path(job, "residual"), final_norm=_path(job, "final-norm"),
                      unembed=_path(job, "unembed"))
    norm = NO_NORM if job.options.get("final_norm") == "none" else _function(job, model, "final-norm")
    try:
        parts = find_parts(model, names, final_norm=norm, unembed=_function(job, model, "unembed"))
    except PartsNotFound as exc:
        message = str(exc)
        option = next((o for word, o in OPTIONS.items() if word in message), ":residual:")
        hint = "" if option in message else f"; name it with {option}"
        raise BadResult(f"{message}{hint}") from None
    if not parts.layers:
        raise BadResult("the model has no layers to read the residual stream after; name them with :residual:")
    return parts


def pieces_words(parts: CausalLMParts) -> str:
    """The read-out's pieces in words, for messages: ``the final norm LlamaRMSNorm and Linear``."""
    norm = f"the final norm {type(parts.final_norm).__name__} and " if parts.final_norm is not None else ""
    return f"{norm}the unembedding {type(parts.unembed).__name__}"


def pieces_found(model: Any, parts: CausalLMParts, job: Job) -> dict[str, str]:
    """``residual`` (the blocks' pattern) and ``readOut`` (the final norm, if any, then the unembedding),
    as the author named them or as found in the model (``model.norm then lm_head``), for the figure's words."""
    paths = {id(module): name for name, module in model.named_modules()} if hasattr(model, "named_modules") else {}

    def named(option: str, piece: Any) -> str:
        given = job.options.get(option.replace("-", "_"))
        return given if isinstance(given, str) else paths.get(id(piece), type(piece).__name__)

    unembed = named("unembed", parts.unembed)
    read_out = f"{named('final-norm', parts.final_norm)} then {unembed}" if parts.final_norm is not None else unembed
    return {"residual": parts.names.get("layers", ""), "readOut": read_out}
