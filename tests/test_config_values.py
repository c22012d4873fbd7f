"""Each ``tensorviz_*`` value is declared once (``ConfigValue``); registering, checking and listing
it are derived from that declaration, for the package's values and for those an extension adds.

The build tests use ``tests/roots/test-config-values``: its ``conf.py`` gives one unusable value for
every kind of check, and its own extension declares one more value through ``add_config_values``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from conftest import copy_root, run_sphinx, warning_records
from sphinx_tensorviz.config import CONFIG_VALUES, Settings, config_values, settings
from sphinx_tensorviz.core.config_values import (
    ConfigValue,
    assignment_line,
    at_least,
    boolean,
    choice,
    path,
    positive,
    text,
)

#: conf.py value -> the warning's text, one per kind of check (choice, integer, non-negative integer,
#: number, positive number, boolean, path, text, and the extension's own value)
EXPECTED = {
    "tensorviz_execution_mode": "tensorviz_execution_mode = 'sometimes' must be one of 'auto', 'cache-only', "
                                "'force', 'off'; using 'auto'",
    "tensorviz_workers": "tensorviz_workers = 0 must be an integer of at least 1; using 2",
    "tensorviz_memory_limit_mb": "tensorviz_memory_limit_mb = -1 must be a non-negative integer; using 0",
    "tensorviz_max_result_mb": "tensorviz_max_result_mb = True must be a number of at least 0.01; using 8",
    "tensorviz_timeout": "tensorviz_timeout = 'soon' must be a positive number of seconds; using 120",
    "tensorviz_drawing_cache": "tensorviz_drawing_cache = 'yes' must be True or False; using True",
    "tensorviz_artifact_dir": "tensorviz_artifact_dir = 42 must be a path (a string); using 'tensorviz_artifacts'",
    "tensorviz_python": "tensorviz_python = ['python3'] must be a string; using ''",
    "tensorviz_course_level": "tensorviz_course_level = 0 must be an integer of at least 1; using 3",
}
#: set in conf.py without a plain assignment: the warning cannot say where, but names the value
UNPLACED = "tensorviz_device = 'tpu' must be one of 'cpu', 'gpu'; using 'cpu'"


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    src = copy_root("config-values", tmp_path_factory.mktemp("config") / "src")
    return src, run_sphinx(src)


@pytest.mark.sphinx
def test_every_kind_of_check_warns_at_its_line_of_conf_py_and_uses_the_default(checked) -> None:  # noqa: ANN001
    src, build = checked
    assert build.statuscode == 0, build.warnings  # the build goes on
    conf = (src / "conf.py").read_text("utf-8").splitlines()
    records = [r for r in warning_records(build.warnings) if r.rstrip().endswith("[tensorviz.config]")]
    assert len(records) == len(EXPECTED) + 1, records
    for name, message in EXPECTED.items():
        line = next(n for n, text in enumerate(conf, start=1) if text.startswith(f"{name} ="))
        assert any(r.startswith(f"{src / 'conf.py'}:{line}: WARNING: {message} [tensorviz.config]")
                   for r in records), (name, records)
    assert any(r.startswith(f"WARNING: {UNPLACED} [tensorviz.config]") for r in records), records
    declared = {v.name: v.default for v in config_values(build.app)}
    for name in [*EXPECTED, "tensorviz_device"]:
        assert build.app.config[name] == declared[name], name
    used = settings(build.app)
    assert (used.mode, used.workers, used.memory_limit_mb, used.max_result_mb) == ("auto", 2, 0, 8)
    assert used.timeout == pytest.approx(120.0) and used.drawing_cache is True
    assert used.python == sys.executable and used.store_dir == (src / "tensorviz_artifacts").resolve()
    assert not [r for r in warning_records(build.warnings) if "has type" in r]  # Sphinx saw only defaults


@pytest.mark.sphinx
def test_a_value_an_extension_declares_is_registered_checked_and_listed(checked) -> None:  # noqa: ANN001
    _, build = checked
    registered = build.app.config.values["tensorviz_course_level"]
    assert (registered.default, registered.rebuild, registered.valid_types) == (3, "html", frozenset({int}))
    assert build.app.config.tensorviz_course_level == 3  # the conf.py value 0 was refused (warning above)
    names = [v.name for v in config_values(build.app)]
    assert names[:len(CONFIG_VALUES)] == [v.name for v in CONFIG_VALUES]
    # then the figure kinds' own limits (each kind declares them, in the order the kinds are set up),
    # then the course extension's value
    from sphinx_tensorviz.render.registry import registry

    limits = [limit.value.name for kind in registry(build.app).executed.values() for limit in kind.limits]
    assert {"tensorviz_max_graph_nodes", "tensorviz_max_heatmap_cells"} <= set(limits)
    assert names[len(CONFIG_VALUES):] == [*limits, "tensorviz_course_level"]


@pytest.mark.sphinx
def test_a_bad_value_from_the_command_line_warns_without_a_conf_py_line(tmp_path: Path) -> None:
    src = copy_root("config-values", tmp_path / "src")
    build = run_sphinx(src, confoverrides={"tensorviz_workers": "-3"})
    (record,) = [r for r in warning_records(build.warnings) if "tensorviz_workers" in r]
    assert record.startswith("WARNING: tensorviz_workers = -3 must be an integer of at least 1; using 2"), record
    assert build.app.config.tensorviz_workers == 2


def test_each_validator_names_what_it_refuses_and_accepts_the_rest() -> None:
    cases = [
        (choice("a", "b"), ["a", "b"], ["c", None, 1], "must be one of 'a', 'b'"),
        (at_least(1, integer=True), [1, 7], [0, -1, 1.5, True, "2"], "must be an integer of at least 1"),
        (at_least(0, integer=True), [0, 3], [-1, False, 0.5], "must be a non-negative integer"),
        (at_least(0.01), [0.01, 1, 2.5], [0, 0.001, True, "8"], "must be a number of at least 0.01"),
        (positive("seconds"), [0.5, 120], [0, -1, "30", True], "must be a positive number of seconds"),
        (boolean, [True, False], [1, "yes", None], "must be True or False"),
        (path, ["x", "", Path("x")], [42, None, ["x"]], "must be a path (a string)"),
        (text, ["", "python3"], [3, None, Path("python")], "must be a string"),
    ]
    for check, good, bad, reason in cases:
        assert [check(v) for v in good] == [None] * len(good), reason
        assert [check(v) for v in bad] == [reason] * len(bad), reason


def test_a_declaration_without_a_check_accepts_anything_and_summarises_its_help() -> None:
    value = ConfigValue("tensorviz_x", 1, (int,), "First sentence,\nwrapped.\n\nMore detail.")
    assert value.problem(object()) is None
    assert value.summary == "First sentence, wrapped."


def test_assignment_line_finds_the_last_assignment_of_a_name(tmp_path: Path) -> None:
    conf = tmp_path / "conf.py"
    conf.write_text("import os\nx = 1\nif os.name:\n    tensorviz_workers = 2\n"
                    "tensorviz_workers: int = 3\nother = 4\n", "utf-8")
    assert assignment_line(conf, "tensorviz_workers") == 5
    assert assignment_line(conf, "tensorviz_timeout") is None
    conf.write_text("this is not python (\n", "utf-8")
    assert assignment_line(conf, "tensorviz_workers") is None
    assert assignment_line(tmp_path / "missing.py", "x") is None


def test_every_package_value_is_declared_once_and_reaches_settings() -> None:
    names = [v.name for v in CONFIG_VALUES]
    assert len(names) == len(set(names)) and all(n.startswith("tensorviz_") for n in names)
    attributes = [v.setting for v in CONFIG_VALUES if v.setting]
    assert [f.name for f in fields(Settings)] == [*attributes, "store_dir", "store_url", "figure_limits"]
    assert all(v.help.strip() and isinstance(v.default, v.types) for v in CONFIG_VALUES)
    assert all(v.check is None or v.problem(v.default) is None for v in CONFIG_VALUES)  # defaults pass
    assert os.PathLike in next(v.types for v in CONFIG_VALUES if v.name == "tensorviz_artifact_dir")
