"""``tv-train``: the directive that describes a training run (nothing runs while reading).

``:model: file.py:make_model`` is the code entry (as ``tv-graph``'s ``:model:``); ``:train:
file.py:train`` names the loop, in the same file or another one, whose code is hashed too, so
editing either re-trains and editing the page's prose does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from ...core.hashing import sha256_text
from ...core.request import ExecutionRequest
from ...read import options as opt
from ...read.directives import Converter, ExecutedDirective
from ...read.sources import local_imports, resolve_inside
from ...read.trained import record_training
from . import KIND

#: the most snapshot steps one run may keep (each is a weights file)
MAX_SNAPSHOTS = 32


def snapshot_steps(argument: str | None) -> list[int]:
    """``0, 100, 300`` (or a YAML list): distinct non-negative steps, in increasing order."""
    items = [item for item in (argument or "").replace("[", " ").replace("]", " ").replace(",", " ").split()]
    try:
        steps = [int(item) for item in items]
    except ValueError:
        raise ValueError(f"{argument!r} is not a list of steps like 0, 100, 300") from None
    if not steps or any(s < 0 for s in steps):
        raise ValueError("give one or more steps, each 0 or more")
    if len(set(steps)) > MAX_SNAPSHOTS:
        raise ValueError(f"at most {MAX_SNAPSHOTS} snapshots (each is a weights file)")
    return sorted(set(steps))


class TrainDirective(ExecutedDirective):
    """``tv-train``: run ``train(model, *, steps, seed, log)`` once and draw its recorded curves."""

    kind = KIND
    extra_options: ClassVar[dict[str, Converter]] = {
        "model": opt.model_reference,
        "train": opt.model_reference,
        "steps": opt.positive_int,
        "snapshots": snapshot_steps,
        "model-args": opt.yaml_mapping,
        "checks": opt.name_list,
    }

    def converted_options(self) -> dict[str, Any]:
        values = super().converted_options()
        for given in ("source", "function", "inputs", "sweep"):
            if given in values:
                raise ValueError(f":{given}: is not an option of tv-train: name the code with :model: and :train:")
        for needed in ("model", "train", "steps"):
            if needed not in values:
                raise ValueError(f"tv-train needs :{needed}: (see the reference: :model: file.py:make_model, "
                                 ":train: file.py:train, :steps: N)")
        values["source"], values["function"] = values.pop("model")
        train_file, values["train-function"] = values.pop("train")
        values["train-file"] = self.course_path(train_file)
        late = [s for s in values.get("snapshots", []) if s > values["steps"]]
        if late:
            raise ValueError(f":snapshots: {', '.join(map(str, late))} after the last step ({values['steps']})")
        values.setdefault("backend", "torch")
        return values

    def result_values(self, values: dict[str, Any]) -> dict[str, Any]:
        result = {
            "train_file": values["train-file"],
            "train": values["train-function"],
            "steps": values["steps"],
            "snapshots": values.get("snapshots", []),
            "model_args": values.get("model-args", {}),
        }
        if values.get("checks"):
            result["checks"] = values["checks"]
        return result

    def build_request(self, values: dict[str, Any]) -> ExecutionRequest:
        """The request; a named run is also recorded, so later figures can use its model (``@name``)."""
        request = super().build_request(values)
        if values.get("name"):
            record_training(self.env, values["name"], request, values.get("snapshots", []))
        return request

    def course_path(self, given: str) -> str:
        """A ``.py`` path relative to this page, as a path relative to the course folder."""
        _, absolute = self.env.relfn2path(given, self.env.docname)
        self.env.note_dependency(absolute)
        path = resolve_inside(Path(self.env.srcdir), Path(absolute), given)
        return path.relative_to(Path(self.env.srcdir).resolve()).as_posix()

    def gather_code(self, values: dict[str, Any]) -> tuple[str, dict[str, str], str | None, Path]:
        """The model's code plus the training file and what it imports, so editing either re-trains."""
        entry, files, inline, importer = super().gather_code(values)
        srcdir = Path(self.env.srcdir).resolve()
        train_file = values["train-file"]
        if train_file not in files:
            code = (srcdir / train_file).read_text("utf-8")
            files[train_file] = sha256_text(code)
            self.env.note_dependency(str(srcdir / train_file))
            for module in local_imports(code, srcdir / train_file, srcdir):
                self.env.note_dependency(str(module))
                files.setdefault(module.relative_to(srcdir).as_posix(), sha256_text(module.read_text("utf-8")))
        return entry, files, inline, importer
