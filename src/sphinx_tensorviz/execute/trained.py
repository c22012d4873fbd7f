"""The weights file a job of a figure that uses a trained model (``:model: @name:step``) loads.

Build side, when the job is made: the training's artifact is in the store by then (its job ran in an
earlier wave, :mod:`.batch`), and its figure kind's ``snapshot`` entry finds the step's file record in
its data. The job carries the file's path in the store's ``weights/`` folder and its sha256, which the
worker checks before loading (:mod:`.worker.trained`), so it is for jobs on this machine: a Dask worker
elsewhere cannot open the path and the figure fails with a located warning.
"""

from __future__ import annotations

from typing import Any

from ..core.kinds import kind_named
from ..core.request import TRAINED, ExecutionRequest
from ..store.artifacts import ArtifactStore
from ..store.returned_files import returned_file_path
from ..warnings_ import Subtype, warn


def training_of(request: ExecutionRequest) -> str | None:
    """The content hash of the training whose model ``request`` uses (``None``: it uses none)."""
    used = request.options.get(TRAINED)
    return used.get("training") if isinstance(used, dict) else None


def trained_weights(request: ExecutionRequest, store: ArtifactStore | None) -> dict[str, Any] | None:
    """``{"path", "sha256", "size", "format"}`` of the snapshot ``request`` uses; ``None`` (after a
    located warning) when the training has no artifact or its file is not in the store."""
    used = request.options[TRAINED]
    found = store.read_artifact(used["training"]) if store is not None else None
    problem = None
    if not isinstance(found, dict):
        problem = "has no stored result (it failed, or did not run): the figure cannot load its weights"
    else:
        kind = kind_named(found.get("data", {}).get("kind"))
        if kind is None or not kind.snapshot:
            problem = "records no model to load"
        else:
            try:
                snapshot = kind.entry("snapshot")(found["data"], used["step"])
            except LookupError as exc:
                problem = str(exc)
    if problem is None:
        name = f"{snapshot['sha256']}.{snapshot.get('format', 'safetensors')}"
        path = returned_file_path(store.root, name)  # type: ignore[union-attr]
        if path.is_file():
            return {"path": str(path), "sha256": snapshot["sha256"], "size": int(snapshot["size"]),
                    "format": snapshot.get("format", "safetensors")}
        problem = f"kept {name}, which is not in the store's weights/ folder (build the training again: tensorviz " \
                  "execute --force, or copy the folder)"
    warn(f"{request.directive}: the training @{used['name']} {problem}", Subtype.store,
         location=(request.docname, request.lineno))
    return None
