"""How ``run.py`` checks a training run: train again and compare the final loss (:mod:`.tolerance`).

The script's ``reproduce()`` is kept here as source text, copied into ``run.py`` after the shared
helpers (``_load_entry``, ``seeded_arguments``, ``seed_everything``) with the tolerance rule's
source, so it runs without this package. Its ``log`` keeps only the last value of the first metric
and stops, as the recorded run did, at a NaN or infinite value. It reports ``finalLossWithinTolerance``
as 1 or 0, compared exactly, and the re-trained ``finalLoss`` beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...execute.reproduce import definitions
from .tolerance import final_loss_tolerance

CODE = '''
class _Stop(BaseException):
    """Leaves the training loop at a NaN or infinite value, as the recorded run did."""


class _FinalLog:
    """The ``log`` of a re-run: the last finite value of the first metric logged."""

    def __init__(self):
        self.metric = None
        self.last = None

    def step(self, step, loss=None, *, model=None, **metrics):
        values = {"loss": loss, **metrics} if loss is not None else metrics
        numbers = {name: float(value) for name, value in values.items()}
        if any(v != v or v in (float("inf"), float("-inf")) for v in numbers.values()):
            raise _Stop()
        if self.metric is None and numbers:
            self.metric = next(iter(numbers))
        if self.metric in numbers:
            self.last = numbers[self.metric]


def reproduce():
    """Train again from the same seed; returns the final loss and whether it is within the tolerance."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    options = RECORD["options"]
    module = _load_entry()
    path = HERE / options["train_file"]
    train_module = module if path == HERE / RECORD["entry"] else import_file(path, "tensorviz_train_" + path.stem)
    make_model = getattr(module, RECORD["function"])
    train = getattr(train_module, options["train"])
    model = make_model(**seeded_arguments(make_model, options.get("model_args") or {}, RECORD["seed"],
                                          RECORD["backend"]))
    log = _FinalLog()
    try:
        train(model, **seeded_arguments(train, {"steps": options["steps"], "log": log}, RECORD["seed"],
                                        RECORD["backend"]))
    except _Stop:
        pass
    expected = RECORD["expected"]["finalLossWithinTolerance"]
    new = float("nan") if log.last is None else log.last
    ok = abs(new - expected["recorded"]) <= final_loss_tolerance(options["steps"], expected["recorded"])
    return {"finalLossWithinTolerance": [1 if ok else 0], "finalLoss": [new]}
'''


def script() -> str:
    rule = definitions(Path(__file__).with_name("tolerance.py"),
                       ("TRAIN_RTOL_PER_STEP", "TRAIN_RTOL_BASE", "TRAIN_RTOL_CAP", "TRAIN_ATOL",
                        "final_loss_rtol", "final_loss_tolerance"))
    return "\n\n".join(rule) + "\n\n" + CODE


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """1 (the re-trained final loss is within the tolerance), with the recorded loss it is measured from."""
    data = artifact["data"]
    curve = data["curves"][0]
    recorded = float(curve["points"][-1][1])
    return {"finalLossWithinTolerance": {"values": [1], "dtype": "int64", "metric": curve["metric"],
                                         "recorded": recorded,
                                         "tolerance": final_loss_tolerance(data["steps"], recorded)}}
