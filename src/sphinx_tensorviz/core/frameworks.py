"""A figure computed in several frameworks (``:frameworks: torch, jax``) as every stage sees it.

Read by ``read/frameworks.py``, run by the execution phase, drawn by ``render/frameworks.py``.
One ordinary request per framework (its own job and content hash: editing the JAX file re-runs only
the JAX job), a *shared weights* job whose file both frameworks' models load (so they compute with
the same numbers), and a *comparison* job hashed on the frameworks' content hashes, which compares
every array both recorded. The two jobs are figure-less kinds, like the cross-sweep check.
Picklable, so ``sphinx-build -j`` can merge it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .kinds import FigureKind, declare
from .request import ExecutionRequest

#: The directive names of the two figure-less jobs.
FRAMEWORKS_CHECK = "tv-frameworks-check"
SHARED_WEIGHTS = "tv-shared-weights"

#: The comparison: every array the frameworks' artifacts both record, within the dtype's tolerance.
FRAMEWORKS_CHECK_KIND = declare(FigureKind(
    name="frameworks-check",
    directive=FRAMEWORKS_CHECK,
    run="sphinx_tensorviz.execute.worker.frameworks_check:run_frameworks_check",
    schema="sphinx_tensorviz.store:schemas/frameworks-check.schema.json",
    compare="sphinx_tensorviz.execute.frameworks_compare:compare_check",
))

#: The weights both frameworks load: made once from the seed by the PyTorch model (or copied from
#: ``:weights:``), returned as a safetensors file with PyTorch's names. Its ``snapshot`` entry is what
#: the execution phase asks of a training, so a framework's job finds the file as a trained figure does.
SHARED_WEIGHTS_KIND = declare(FigureKind(
    name="shared-weights",
    directive=SHARED_WEIGHTS,
    run="sphinx_tensorviz.execute.worker.shared_weights:run_shared_weights",
    schema="sphinx_tensorviz.store:schemas/shared-weights.schema.json",
    snapshot="sphinx_tensorviz.core.frameworks:weights_snapshot",
    compare="sphinx_tensorviz.execute.frameworks_compare:compare_weights",
))

@dataclass(frozen=True)
class Frameworks:
    """Everything a figure with ``:frameworks:`` shows; the first framework's figure is the one drawn."""

    requests: dict[str, ExecutionRequest]  #: framework -> its figure's request, in the author's order
    check: ExecutionRequest  #: the comparison job
    weights: ExecutionRequest | None = None  #: the shared weights job (kinds that run a model)
    show: str = "one"  #: ``one``: one figure when they agree; ``both``: every framework's figure

    def all_requests(self) -> list[ExecutionRequest]:
        """In the order they run: the weights, the frameworks, the comparison."""
        return [*([self.weights] if self.weights else []), *self.requests.values(), self.check]

    @property
    def first(self) -> ExecutionRequest:
        return next(iter(self.requests.values()))


def weights_snapshot(data: dict[str, Any], step: int | None = None) -> dict[str, Any]:
    """The shared weights' file record (``{sha256, size, format}``): there is one step."""
    return dict(data["file"])

