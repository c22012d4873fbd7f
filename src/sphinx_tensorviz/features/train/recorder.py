"""The ``log`` a training function receives: scalars per step, and the parameters at snapshot steps.

``log.step(step, loss=..., **metrics)`` records scalars (bounded by :mod:`.curves`); at a step of
``:snapshots:`` it keeps the model's parameters (the object ``make_model`` returned, which PyTorch
and Flax NNX change in place, or ``model=`` for an immutable Equinox model). A value that is NaN or
infinite stops the run there: nothing after it is recorded, the artifact keeps what came before,
and the page says that the run diverged.
"""

from __future__ import annotations

import math
from typing import Any

from ...core.limits import LimitExceeded
from ...execute.worker.loader import BadResult
from . import WEIGHTS_MB
from .curves import Curve
from .weights import parameters_file, sha256_name

#: the most distinct metrics one run may log (each is a panel of the chart)
MAX_METRICS = 8
_MIB = 1024 * 1024


class Diverged(BaseException):
    """Raised by :meth:`TrainingLog.step` to leave the author's loop at a non-finite value (a
    ``BaseException`` so that the loop's own ``except Exception`` does not swallow it)."""


class TrainingLog:
    """What ``train(model, *, steps, seed, log)`` reports to."""

    def __init__(self, model: Any, backend: str, steps: int, snapshots: list[int], weights_limit_mb: float) -> None:
        self._model = model
        self._backend = backend
        self._steps = steps
        self._wanted = set(snapshots)
        self._limit = weights_limit_mb * _MIB
        self._curves: dict[str, Curve] = {}
        self._last_step = -1
        self.snapshots: list[dict[str, Any]] = []
        self.files: dict[str, bytes] = {}
        self.diverged: dict[str, Any] | None = None

    # -- the author's side ------------------------------------------------
    def step(self, step: int, loss: Any = None, *, model: Any = None, **metrics: Any) -> None:
        """Record the scalars of step ``step`` (0 to ``:steps:``, never decreasing); keep the
        parameters if it is a snapshot step. ``model``: the current model, when it is a new object
        each step (Equinox)."""
        if isinstance(step, bool) or not isinstance(step, int) and not hasattr(step, "__index__"):
            raise BadResult(f"log.step's step must be an integer, got {step!r}")
        step = int(step)
        if not 0 <= step <= self._steps or step < self._last_step:
            raise BadResult(f"log.step({step}): steps run from 0 to :steps: ({self._steps}) and never go back "
                            f"(the last was {self._last_step})")
        self._last_step = step
        if model is not None:
            self._model = model
        values = {"loss": loss, **metrics} if loss is not None else metrics
        numbers = {name: _scalar(name, value) for name, value in values.items()}
        for name, number in numbers.items():
            if not math.isfinite(number):
                self.diverged = {"step": step, "metric": name, "value": "nan" if math.isnan(number) else "inf"}
                raise Diverged()
        for name, number in numbers.items():
            self._curve(name).add(step, number)
        if step in self._wanted:
            self.keep(step)

    # -- the runner's side ------------------------------------------------
    def keep(self, step: int, model: Any = None) -> None:
        """Keep the parameters of ``model`` (default: the current one) as step ``step``'s snapshot."""
        self._wanted.discard(step)
        content, count = parameters_file(self._model if model is None else model, self._backend)
        total = sum(len(c) for c in self.files.values()) + len(content)
        if total > self._limit:
            raise LimitExceeded(f"the snapshots up to step {step} take {total / _MIB:.1f} MiB, over "
                                f"tensorviz_max_weights_mb = {self._limit / _MIB:g}; keep fewer :snapshots:, use a "
                                "smaller model, or raise the limit", WEIGHTS_MB)
        name = sha256_name(content)
        self.files[name] = content
        self.snapshots.append({"step": step, "sha256": name.partition(".")[0], "size": len(content),
                               "format": "safetensors", "tensors": count})

    def finish(self, returned: Any = None) -> None:
        """After the loop: the last step's snapshot from the model ``train`` returned (else the
        current one) if the loop did not log that step; a snapshot step never reached is the
        author's error, unless the run diverged before it."""
        if self.diverged is None and self._steps in self._wanted:
            self.keep(self._steps, returned)
        missing = sorted(s for s in self._wanted if self.diverged is None or s < self.diverged["step"])
        if missing:
            raise BadResult(f"the training function never logged the snapshot step(s) {', '.join(map(str, missing))}; "
                            "call log.step(step, ...) at every step of :snapshots:")

    def curves(self) -> list[dict[str, Any]]:
        return [{"metric": c.metric, "points": [[s, v] for s, v in c.stored()], "logged": c.logged}
                for c in self._curves.values()]

    def _curve(self, name: str) -> Curve:
        if name not in self._curves:
            if len(self._curves) >= MAX_METRICS:
                raise BadResult(f"more than {MAX_METRICS} metrics logged ({', '.join(self._curves)}, {name}); "
                                "log the ones the figure shows")
            self._curves[name] = Curve(name)
        return self._curves[name]


def _scalar(name: str, value: Any) -> float:
    """A Python float from a number, a 0-d NumPy array, tensor or JAX array."""
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):  # torch: RuntimeError for a tensor of several values
        raise BadResult(f"log.step's {name}= must be a number (a 0-d tensor is fine), got "
                        f"{type(value).__name__}") from None
