"""A check answers with a boolean: ``"no"``, ``1`` or ``0.3`` would pass by truthiness, so they are a
bad result that names the check; booleans of every framework are answers."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

from sphinx_tensorviz.execute.worker.checks import run_checks
from sphinx_tensorviz.execute.worker.loader import BadResult


def module_with(answer: Any) -> types.ModuleType:
    module = types.ModuleType("lesson")
    module.claim = lambda values: answer  # type: ignore[attr-defined]
    module.mapped = lambda values: {"passed": answer, "value": 1.0}  # type: ignore[attr-defined]
    return module


def booleans() -> list[Any]:
    torch = pytest.importorskip("torch")
    jnp = pytest.importorskip("jax.numpy")
    return [True, False, np.bool_(True), np.array(False), (np.ones(3) > 0).all(), torch.tensor([1.0]).eq(1).all(),
            jnp.all(jnp.ones(2) > 0)]


@pytest.mark.execution
def test_booleans_of_every_framework_are_answers() -> None:
    for answer in booleans():
        for name in ("claim", "mapped"):
            (record,) = run_checks(module_with(answer), [name], np.eye(2))
            assert record["passed"] is bool(answer), (answer, name)


@pytest.mark.parametrize("answer", ["no", "", 1, 0.3, None, np.float64(1.0), [True], np.array([True, False])])
@pytest.mark.parametrize("name", ["claim", "mapped"])
def test_any_other_answer_is_a_bad_result_that_names_the_check(answer: Any, name: str) -> None:
    with pytest.raises(BadResult) as caught:
        run_checks(module_with(answer), [name], np.eye(2))
    assert f"check {name!r} returned {answer!r}"[:40] in str(caught.value)
    assert "True or False" in str(caught.value)


def test_a_missing_check_names_the_file_it_was_looked_for_in() -> None:
    with pytest.raises(BadResult, match=r"no check function named 'absent' in models/mlp\.py"):
        run_checks(module_with(True), ["absent"], np.eye(2), code="models/mlp.py")
