"""``torch.compile`` under the capture: the eager graph is recorded, and the page says so.

Dynamo traces whatever Python runs inside a compiled region, the capture's own function mode
and module hooks included: a compiled module failed (``UnspecializedNNModuleVariable(...) is
already tracked for mutation``, from the capture's pre-hook), and a compiled function was cut at
graph breaks into ``torch_dynamo_resume_in_...`` frames that became function groups. A graph is
about the code as its author wrote it, so during the capture compiled code runs eagerly
(``torch.compiler.set_stance("force_eager")``, scoped to the one call, so nothing is compiled
and no hook reaches Dynamo), a compiled module is traced through the module it wraps
(``_orig_mod``, whose name is left out of node ids), and the artifact records ``compiled`` so the
figure notes that the eager graph is shown.

Nothing here imports Dynamo (a second and a half): a model can hold compiled code only once
something imported it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

import torch

__all__ = ["clean_name", "eager", "is_compiled_module", "runs_compiled_code", "unwrap"]

_WRAPPED = "_orig_mod"
#: How far up the stack an op looks for a compiled function's entry frame.
_MAX_FRAMES = 64


def _eval_frame() -> Any:
    return sys.modules.get("torch._dynamo.eval_frame")


def is_compiled_module(module: Any) -> bool:
    """An ``OptimizedModule``: what ``torch.compile(module)`` returns."""
    eval_frame = _eval_frame()
    return eval_frame is not None and isinstance(module, eval_frame.OptimizedModule)


def unwrap(model: Any) -> Any:
    """The module a compiled module wraps (``model`` itself when it is not compiled)."""
    while is_compiled_module(model):
        model = getattr(model, _WRAPPED)
    return model


def clean_name(name: str) -> str:
    """``block._orig_mod.lin`` -> ``block.lin``: a compiled submodule is named as its author named it."""
    return ".".join(part for part in name.split(".") if part != _WRAPPED)


@contextmanager
def eager() -> Iterator[None]:
    """Run compiled modules and functions eagerly for the duration of the capture."""
    if "torch._dynamo" not in sys.modules:
        yield
        return
    with torch.compiler.set_stance("force_eager"):
        yield


def runs_compiled_code(frame: FrameType | None, stop: Collection[CodeType]) -> bool:
    """Whether a compiled function's entry lies between ``frame`` and the running ``forward``."""
    eval_frame = _eval_frame()
    if eval_frame is None:
        return False
    entry = os.path.normcase(eval_frame.__file__)
    for _ in range(_MAX_FRAMES):
        if frame is None or frame.f_code in stop:
            return False
        if os.path.normcase(frame.f_code.co_filename) == entry:
            return True
        frame = frame.f_back
    return False
