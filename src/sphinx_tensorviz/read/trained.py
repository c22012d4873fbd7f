"""``:model: @name`` / ``@name:step``: a later figure that uses a recorded training run's model.

A kind that records trainings (``tv-train``) calls :func:`record_training` when it reads one and
:func:`setup_trained_models` with its directive's name; every directive that takes ``:model:``
converts it with :func:`model_option` and resolves it with :func:`use_model`. Nothing here knows a
kind by name.

Why the reading order matters: the dependent's content hash includes the training's content hash
and the step (``options["trained"]``), so the training must be read first. Before Sphinx reads,
the documents that hold a training (found by a cheap scan of their source for the directive's name,
plus what the environment recorded last build) are moved to the front of the list; when a
training's document is read again, the documents that use it are read again too (their hash may
change). Under ``sphinx-build -j`` the documents are read in several processes at once, so a
dependent may not see a training read in another one: it then warns (never a stale hash: a
document's records are purged before it is read) and is read again on the next build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.environment.collectors import EnvironmentCollector
from sphinx.util.docutils import SphinxDirective

from ..config import app_of
from ..core.request import TRAINED, ExecutionRequest
from ..core.state import table
from . import options as opt

#: docname -> {training name: record}, filled by :func:`record_training`
TRAININGS = "tensorviz_trainings"
#: docname -> {training name: whether it was found when the document was read}
USES = "tensorviz_trained_uses"

#: the sweep parameter that steps through a training's snapshots
SNAPSHOT = "snapshot"

_REFERENCE = re.compile(r"@(?P<name>[\w][\w.-]*)(?::(?P<step>\d+))?")


@dataclass(frozen=True)
class TrainedModel:
    """What ``@name`` (``step`` ``None``: the last snapshot) or ``@name:step`` names."""

    name: str
    step: int | None = None


def model_option(argument: str | None) -> tuple[str, str] | TrainedModel:
    """``path/to/file.py:factory``, or ``@name`` / ``@name:step`` (a ``tv-train``'s model)."""
    text = (argument or "").strip()
    if not text.startswith("@"):
        return opt.model_reference(text)
    found = _REFERENCE.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} should look like @induction (the last snapshot) or @induction:300")
    step = found.group("step")
    return TrainedModel(nodes.fully_normalize_name(found.group("name")), None if step is None else int(step))


def record_training(env: BuildEnvironment, name: str, request: ExecutionRequest, steps: list[int]) -> None:
    """Remember the training ``name`` (its ``:name:``) read from ``request``, with its snapshot steps;
    ``ValueError`` when another training of other code or options has that name (a figure could not tell
    which it uses; the same run written twice, as a manual's examples may, is one training)."""
    other = trainings(env).get(nodes.fully_normalize_name(name))
    if other is not None and other["contentHash"] != request.content_hash:
        raise ValueError(f":name: another {request.directive} is named {name!r} ({other['docname']}, line "
                         f"{other['lineno']}); give each training its own name")
    table(env, TRAININGS).setdefault(request.docname, {})[nodes.fully_normalize_name(name)] = {
        "docname": request.docname, "lineno": request.lineno, "contentHash": request.content_hash,
        "entry": request.entry, "function": request.function, "backend": request.backend, "seed": request.seed,
        "modelArgs": request.options.get("model_args") or {}, "snapshots": list(steps),
    }


def trainings(env: BuildEnvironment) -> dict[str, dict[str, Any]]:
    """Every recorded training by name."""
    return {name: record for records in table(env, TRAININGS).values() for name, record in records.items()}


def use_model(directive: SphinxDirective, values: dict[str, Any], reference: Any) -> tuple[str, str]:
    """(file, factory) of ``:model:``; for ``@name`` also the training's backend, seed and
    ``:model-args:``, and ``values["trained"]`` (hashed with the request: the training's content
    hash and the step). ``ValueError`` names the valid trainings or steps."""
    if not isinstance(reference, TrainedModel):
        return reference
    env = directive.env
    known = trainings(env)
    uses = table(env, USES).setdefault(env.docname, {})
    uses[reference.name] = reference.name in known
    if reference.name not in known:
        names = ", ".join(f"@{n}" for n in sorted(known)) or "none"
        parallel = " (this build reads pages in parallel: a training read in another process is not seen; " \
                   "build again)" if getattr(app_of(env), "parallel", 0) > 1 else ""
        raise ValueError(f":model: no training named {reference.name!r}; the trainings are: {names}{parallel}")
    record = known[reference.name]
    steps = record["snapshots"]
    if not steps:
        raise ValueError(f":model: the training {reference.name!r} kept no snapshots (give it :snapshots:)")
    step = steps[-1] if reference.step is None else reference.step
    if step not in steps:
        raise ValueError(f":model: the training {reference.name!r} has no snapshot at step {step}; its steps are "
                         f"{', '.join(map(str, steps))}")
    swept = (values.get("sweep") or {}).get(SNAPSHOT, [])
    wrong = [str(s) for s in swept if s not in steps]
    if wrong:
        raise ValueError(f":sweep: {SNAPSHOT} {', '.join(wrong)} is not a snapshot of the training {reference.name!r}; "
                         f"its steps are {', '.join(map(str, steps))}")
    for given in ("model-args", "seed"):
        if given in values:
            raise ValueError(f":{given}: comes from the training {reference.name!r}; leave it out")
    if values.get("backend", record["backend"]) != record["backend"]:
        raise ValueError(f":backend: the training {reference.name!r} is {record['backend']}")
    values.update({"backend": record["backend"], "seed": record["seed"], "model-args": record["modelArgs"],
                   TRAINED: {"name": reference.name, "training": record["contentHash"], "step": step}})
    return f"/{record['entry']}", str(record["function"])


def at_snapshot(options: dict[str, Any], values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A sweep point's values without ``snapshot``, and the options that point at that step instead
    (``:sweep: snapshot=[0, 10, 20]`` of a ``:model: @name`` figure: the model as it was at each step)."""
    used = options.get(TRAINED)
    if not isinstance(used, dict) or SNAPSHOT not in values:
        return values, {}
    rest = {name: value for name, value in values.items() if name != SNAPSHOT}
    return rest, {TRAINED: {**used, "step": values[SNAPSHOT]}}


def setup_trained_models(app: Sphinx, directive: str) -> None:
    """Read the documents that hold a ``directive`` (a training) first, and re-read their dependents."""
    app.add_env_collector(TrainedModelsCollector)
    app.connect("env-before-read-docs", lambda app, env, docnames: _trainings_first(env, docnames, directive))
    app.connect("env-get-outdated", _dependents)


def _trainings_first(env: BuildEnvironment, docnames: list[str], directive: str) -> None:
    """Move the documents that hold a training to the front (in place: Sphinx reads this list)."""
    recorded = set(table(env, TRAININGS))

    def holds_training(docname: str) -> bool:
        if docname in recorded:
            return True
        try:
            return directive in Path(env.doc2path(docname)).read_text("utf-8", errors="replace")
        except OSError:
            return False

    first = {docname for docname in docnames if holds_training(docname)}
    docnames.sort(key=lambda docname: docname not in first)  # stable: the rest keep their order


def _dependents(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                removed: set[str]) -> list[str]:
    """``env-get-outdated``: the documents that use a training whose document is read again (or gone),
    and those that used one not found when they were read."""
    touched = added | changed | removed
    names = {name for docname, records in table(env, TRAININGS).items() if docname in touched for name in records}
    return sorted(docname for docname, uses in table(env, USES).items() if docname not in removed
                  and any(name in names or not found for name, found in uses.items()))


class TrainedModelsCollector(EnvironmentCollector):
    """Purges a document's trainings and uses when it is read again, and merges them under ``-j``."""

    def clear_doc(self, app: Sphinx, env: BuildEnvironment, docname: str) -> None:
        for attr in (TRAININGS, USES):
            table(env, attr).pop(docname, None)

    def merge_other(self, app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
        for attr in (TRAININGS, USES):
            mine, theirs = table(env, attr), table(other, attr)
            mine.update({docname: theirs[docname] for docname in docnames if docname in theirs})

    def process_doc(self, app: Sphinx, doctree: nodes.document) -> None:
        """Nothing to collect from the doctree: the directives fill the tables while they run."""
