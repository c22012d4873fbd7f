"""``tv-train``: an author's training loop, run once at build time, recorded as curves and weights.

Everything of the kind is here, declared once in :data:`KIND`: the directive (:mod:`.directive`)
names the model factory, the training function, the steps and the snapshot steps; the worker runs
the loop with a :class:`.recorder.TrainingLog` (:mod:`.run`, :mod:`.recorder`, :mod:`.curves`,
:mod:`.weights`); the store checks its data (``schema.json``, :mod:`.checks`); the page draws the
curves as a line chart (:mod:`.render`, :mod:`.chart`, :mod:`.describe`); ``run.py``, ``tensorviz
verify`` and ``tensorviz show`` re-train, compare and summarise (:mod:`.reproduce`, :mod:`.verify`,
:mod:`.show`, on the rule of :mod:`.tolerance`).

How the stored snapshots are found and loaded (the design ``@name`` / ``@name:step`` references of
later figures build on):

- A training artifact is addressed, like every artifact, by its content hash (the code of the model
  and training files, the options, the seed): ``<store>/<hash>.json``. Its ``data.snapshots`` lists
  one record per kept step, ``{"step", "sha256", "size", "format": "safetensors", "tensors"}``, in
  step order, so *(training content hash, step)* names exactly one weights file.
- The weights are ``<store>/weights/<sha256>.safetensors`` (:mod:`...store.returned_files`): named by
  content, written atomically by the build from the worker's job folder, never changed in place. A
  figure that uses a snapshot puts the training artifact's content hash and the step into its own
  content hash, so it runs again exactly when the training does; reading the file, it checks the
  sha256 the artifact lists (:mod:`.snapshots`: the record of a step, with the valid steps named
  when there is none, and the file's bytes read back checked).
- The tensor names are what the framework's own loading takes back: PyTorch ``state_dict()`` keys
  (``model.load_state_dict(safetensors.torch.load_file(path))``); for JAX the dotted pytree paths of
  the parameters, ``nnx.state(model, nnx.Param)`` for Flax NNX (load with ``nnx.update``) and the
  array leaves of the model given to ``log.step(..., model=model)`` for Equinox (``eqx.tree_at`` or
  ``jax.tree_util.tree_unflatten`` on the same structure): :func:`.weights.flat_jax_arrays`.
- A page never needs the weights: the curves, the snapshot list and the claims are in the artifact,
  so a cache-only build (Read the Docs) draws the figure without the ``weights/`` folder or a framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.config_values import ConfigValue, at_least
from ...core.kinds import FigureKind, SizeLimit, declare

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: the limit field of a training run's stored weights (all its snapshots together, in MiB), and its default
WEIGHTS_MB, DEFAULT_WEIGHTS_MB = "weights_mb", 64

KIND = declare(FigureKind(
    name="train",
    directive="tv-train",
    run=f"{__name__}.run:run_train",
    schema=f"{__name__}:schema.json",
    consistency=f"{__name__}.checks:consistency_errors",
    limits=(SizeLimit(WEIGHTS_MB, ConfigValue("tensorviz_max_weights_mb", DEFAULT_WEIGHTS_MB, (int, float), """
            The most weights, in MiB, that one `tv-train` may keep: the sum of its `:snapshots:` files
            (safetensors, in the store's `weights/` folder). The default holds five snapshots of a model
            with about three million float32 parameters; a run over it fails with a located
            `tensorviz.limit` warning. Keep fewer snapshots or a smaller model, or raise the limit.
            """, check=at_least(0), rebuild="", topic="limits"), f"{__name__}.checks:weights_problem"),),
    parts=f"{__name__}.render:train_parts",
    reproduce=f"{__name__}.reproduce",
    compare=f"{__name__}.verify:compare",
    summary=f"{__name__}.show:summary",
    snapshot=f"{__name__}.snapshots:find_snapshot",
))


def setup_train(app: Sphinx) -> None:
    # imported here: a worker imports this package for :mod:`.run`, and needs neither Sphinx nor docutils
    from ...read.trained import setup_trained_models
    from ...render.registry import add_figure_kind
    from .directive import TrainDirective

    add_figure_kind(app, KIND, TrainDirective)
    setup_trained_models(app, KIND.directive)  # read trainings first; ``@name`` in later figures
