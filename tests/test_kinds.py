"""A figure kind's declaration: found by name, declared again harmlessly, versioned into its hashes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sphinx_tensorviz.core import kinds
from sphinx_tensorviz.core.kinds import FigureKind, declare, kind_named
from sphinx_tensorviz.features.graph import KIND as GRAPH
from sphinx_tensorviz.features.graph.directive import GraphDirective
from sphinx_tensorviz.features.heatmap import KIND as HEATMAP
from sphinx_tensorviz.features.heatmap.directive import HeatmapDirective
from sphinx_tensorviz.read.directives import ExecutedDirective

PROBE = FigureKind(name="probe-kind", directive="tv-probe", run="probe.run:run", schema="probe:schema.json")


@pytest.fixture
def catalogue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "_DECLARED", dict(kinds._DECLARED))


def test_a_kind_is_found_by_the_name_its_artifacts_give(catalogue: None) -> None:
    assert kind_named("probe-kind") is None and kind_named(None) is None
    declare(PROBE)
    assert kind_named("probe-kind") is PROBE


def test_declaring_a_kind_again_replaces_it_and_another_entry_of_that_name_is_refused(catalogue: None) -> None:
    declare(PROBE)
    again = replace(PROBE, summary="probe.show:summary")  # its module imported once more, say
    assert declare(again) is again and kind_named("probe-kind") is again
    with pytest.raises(ValueError, match="two figure kinds are named 'probe-kind'"):
        declare(replace(PROBE, run="elsewhere.run:run"))


def test_an_entry_a_kind_leaves_empty_says_which() -> None:
    with pytest.raises(LookupError, match="'summary' is empty in the declaration of the figure kind 'probe-kind'"):
        PROBE.entry("summary")


def _directive(cls: type[ExecutedDirective], kind: FigureKind) -> ExecutedDirective:
    made = cls.__new__(cls)  # hashed_extra reads only the kind: no Sphinx state needed
    made.kind = kind
    return made


def test_a_kind_s_version_enters_its_content_hashes_only_once_it_has_one() -> None:
    assert _directive(HeatmapDirective, HEATMAP).hashed_extra("numpy") == {}  # the course keeps its hashes
    assert _directive(HeatmapDirective, replace(HEATMAP, version=2)).hashed_extra("numpy") == {"kindVersion": 2}
    graph = _directive(GraphDirective, replace(GRAPH, version=2))
    assert graph.hashed_extra("torch") == {"kindVersion": 2, "captureVersion": 3}
    assert _directive(GraphDirective, GRAPH).hashed_extra("torch") == {"captureVersion": 3}


def test_every_kind_s_schema_ships_in_the_wheel() -> None:
    """A kind's ``schema.json`` is package data: a wheel without it cannot check a single artifact."""
    import fnmatch
    import tomllib
    from pathlib import Path

    from sphinx_tensorviz.core.kinds import declared
    from sphinx_tensorviz.features import declare_builtin_kinds

    declare_builtin_kinds()
    root = Path(__file__).resolve().parents[1]
    patterns = tomllib.loads((root / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]["package-data"]
    shipped = patterns["sphinx_tensorviz"]
    for kind in declared():
        package, _, name = kind.schema.partition(":")
        if not package.startswith("sphinx_tensorviz."):
            continue  # a kind from another package ships its own data
        relative = "/".join([*package.split(".")[1:], name])
        assert any(fnmatch.fnmatch(relative, pattern.replace("**/", "*")) for pattern in shipped), relative
