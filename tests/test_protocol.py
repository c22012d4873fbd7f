"""The worker protocol: jobs and results keep their shape across the process boundary, and a result
written by a worker that ran hostile code is refused unless it has exactly the protocol's shape."""

from __future__ import annotations

import importlib
import json

import pytest

from sphinx_tensorviz.core.protocol import (
    WORKER_KINDS,
    Failure,
    FailureKind,
    Job,
    ProtocolError,
    Success,
    parse_result,
)
from sphinx_tensorviz.warnings_ import Subtype, failure_subtype

ENVIRONMENT = {"backend": "cpu", "python": "3.11.7", "framework": "numpy", "numpy": "2.0"}


def a_job(**changes: object) -> Job:
    base = Job("tv-heatmap", "sphinx_tensorviz.features.heatmap.run:run_heatmap", "numpy", 3, "scores", {"n": 2}, {"unit": ""}, "cpu",
               "models/m.py", "/course", {"models/m.py": "0" * 64}, search_path=("/course/models", "/course"),
               entry_path="/course/models/m.py")
    return Job(**{**base.__dict__, **changes})


def test_a_job_survives_its_json_file() -> None:
    job = a_job(sweep_points=({"values": [1], "contentHash": "a" * 64, "data": [[1.0]]},), limits={"result_mb": 2})
    again = Job.from_json(json.loads(json.dumps(job.to_json())))
    assert again == job
    assert job.to_json()["entryPath"] == "/course/models/m.py" and "inlineCode" not in job.to_json()


@pytest.mark.parametrize("damage", [
    {"runner": "os.system"}, {"runner": "a b:c"},  # a runner is module:function
    {"seed": "3"}, {"seed": True}, {"options": []}, {"searchPath": "/tmp"}, {"unexpected": 1},
])
def test_a_damaged_job_is_refused(damage: dict) -> None:
    document = {**a_job().to_json(), **damage}
    with pytest.raises(ProtocolError):
        Job.from_json(document)


def test_a_job_without_its_code_is_refused() -> None:
    document = a_job().to_json()
    del document["entry"]
    with pytest.raises(ProtocolError, match="entry"):
        Job.from_json(document)


def test_results_round_trip() -> None:
    success = Success({"kind": "heatmap", "values": [[1.0]]}, ENVIRONMENT, "hi\n", ({"name": "c", "passed": True},),
                      ("cut",), {"peakMemoryMb": 12.5})
    assert parse_result(json.loads(json.dumps(success.to_json()))) == success
    no_checks = Success({"kind": "graph"}, ENVIRONMENT)
    assert "checks" not in no_checks.to_json() and parse_result(no_checks.to_json()).checks is None
    failure = Failure(FailureKind.limit, "too big", stdout="x", limit="result_mb")
    assert parse_result(failure.to_json()) == failure


@pytest.mark.parametrize("document", [
    None, [], {"ok": "yes"},
    {"ok": True, "data": {"kind": "heatmap"}},  # no environment
    {"ok": True, "data": "values", "environment": ENVIRONMENT},
    {"ok": True, "data": {"kind": "heatmap"}, "environment": ENVIRONMENT, "checks": "all passed"},
    {"ok": True, "data": {"kind": "heatmap"}, "environment": ENVIRONMENT, "stdout": 5},
    {"ok": True, "data": {"kind": "heatmap"}, "environment": ENVIRONMENT, "execution": {"seconds": "1"}},
    {"ok": True, "data": {"kind": "heatmap"}, "environment": ENVIRONMENT, "notes": [1]},
    {"ok": False, "subtype": "timeout", "message": "a worker may not claim the build's findings"},
    {"ok": False, "subtype": "crash", "message": "nor this one"},
    {"ok": False, "subtype": "explosion", "message": "unknown kind"},
    {"ok": False, "subtype": "execution", "message": 3},
    {"ok": False, "subtype": "execution", "message": "m", "traceback": ["not", "text"]},
])
def test_a_result_of_any_other_shape_is_refused(document: object) -> None:
    with pytest.raises(ProtocolError):
        parse_result(document)


def test_every_failure_kind_is_a_warning_subtype() -> None:
    assert {k.value for k in FailureKind} <= {s.value for s in Subtype}
    assert failure_subtype("timeout") is Subtype.timeout
    assert failure_subtype("from-a-newer-version") is Subtype.crash
    assert WORKER_KINDS == {FailureKind.execution, FailureKind.bad_result, FailureKind.limit}


@pytest.mark.parametrize("kind", ["heatmap", "graph", "sweep-check"])
def test_every_declared_worker_entry_exists(kind: str) -> None:
    import sphinx_tensorviz.features.graph
    import sphinx_tensorviz.features.heatmap  # noqa: F401 - declares its kind
    from sphinx_tensorviz.core import sweep  # noqa: F401 - declares the cross-sweep check's kind
    from sphinx_tensorviz.core.kinds import kind_named

    declared = kind_named(kind)
    assert declared is not None and callable(declared.entry("run"))
    module, _, name = declared.run.partition(":")
    assert callable(getattr(importlib.import_module(module), name))


def test_a_job_names_its_runner_as_module_and_function() -> None:
    document = a_job().to_json()
    for bad in ("", "os.system", "a b:c", "sphinx_tensorviz.features.heatmap.run:run_heatmap; x"):
        with pytest.raises(ProtocolError, match="runner"):
            Job.from_json({**document, "runner": bad})


def test_the_worker_calls_only_a_kind_s_marked_entry(tmp_path) -> None:  # noqa: ANN001
    """A job naming any other function (``os:system``) gets a failure, and nothing is called."""
    from sphinx_tensorviz.execute.worker.job import run_job

    marker = tmp_path / "ran"
    lesson = tmp_path / "lesson.py"
    lesson.write_text("result = [[1.0]]\n")
    job = a_job(runner="os:system", entry_path=str(lesson), srcdir=str(tmp_path), function=None,
                inputs={"command": f"touch {marker}"})
    result = run_job(job)
    assert not result.ok and "worker entry" in result.message
    assert not marker.exists()
