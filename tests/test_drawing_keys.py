"""The drawing cache's name for a recording (``artifact_key``): kept per artifact object, yet any
other recording, however close, gets its own name."""

from __future__ import annotations

import copy
from typing import Any

from sphinx_tensorviz.render import cache
from sphinx_tensorviz.render.cache import artifact_key


def recording(value: float) -> dict[str, Any]:
    return {"contentHash": "ab" * 32, "generatedAt": "2026-01-01T00:00:00+00:00",
            "data": {"kind": "heatmap", "values": [[value, 2.0]]}, "checks": [], "environment": {"python": "3.11"},
            "execution": {"seconds": 1.0}}


def test_the_same_recording_read_twice_has_one_name() -> None:
    first, again = recording(1.0), recording(1.0)
    assert artifact_key(first) == artifact_key(first) == artifact_key(again)


def test_an_edited_recording_under_the_same_hash_is_named_anew() -> None:
    kept = recording(1.0)
    key = artifact_key(kept)
    edited = copy.deepcopy(kept)
    edited["data"]["values"][0][0] = 1.5  # hand-edited data, same contentHash and time stamp
    assert artifact_key(edited) != key
    timing = copy.deepcopy(kept)
    timing["execution"] = {"seconds": 9.0}  # a fact of one run, not drawn
    assert artifact_key(timing) == key


def test_the_kept_names_are_bounded_and_never_mixed_up() -> None:
    cache._KEYS.clear()
    recordings = [recording(float(n)) for n in range(cache._KEPT_KEYS + 10)]
    keys = [artifact_key(r) for r in recordings]
    assert len(set(keys)) == len(keys)
    assert len(cache._KEYS) == cache._KEPT_KEYS
    assert [artifact_key(r) for r in recordings] == keys  # evicted ones are hashed again, to the same name
