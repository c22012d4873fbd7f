"""The artifact store: atomic, validated writes; problems reported, never raised; failure records.

The artifacts used here are real: the NumPy heatmap and the PyTorch graph that a real build of
``tests/roots/test-snapshot`` recorded and that root commits (its snapshot builds read them), so
these tests need no build and run in the fast tier. One test (marked ``sphinx``) builds
``tests/roots/test-rebuild`` and puts what the current code records through the same store.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOTS, copy_root, load_artifacts, run_sphinx, store_dir
from sphinx_tensorviz.store.artifacts import ArtifactStore, StoreProblem, dump_json, schema_errors


@pytest.fixture(scope="module")
def real_artifacts() -> list[dict[str, Any]]:
    """The heatmap first (the damage cases edit its values), then the graph."""
    by_kind = {a["data"]["kind"]: a for a in load_artifacts(ROOTS / "test-snapshot").values()}
    assert sorted(by_kind) == ["graph", "heatmap"]
    return [by_kind["heatmap"], by_kind["graph"]]


@pytest.mark.sphinx
def test_what_a_build_records_now_round_trips(tmp_path: Path) -> None:
    """The committed artifacts above were recorded by an earlier build: this one is fresh."""
    src = copy_root("rebuild", tmp_path / "src")
    built = run_sphinx(src)
    assert built.summary == (2, 0, 0)
    artifacts = list(load_artifacts(src).values())
    assert len(artifacts) == 2
    store = ArtifactStore(tmp_path / "copy")
    for artifact in artifacts:
        assert schema_errors(artifact) == []
        path = store.write_artifact(copy.deepcopy(artifact))
        assert path.read_bytes() == (store_dir(src) / path.name).read_bytes()
        assert store.read_artifact(artifact["contentHash"]) == artifact
    assert sorted(store.artifact_hashes()) == sorted(a["contentHash"] for a in artifacts)


@pytest.fixture
def artifact(real_artifacts: list[dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(real_artifacts[0])


@pytest.fixture
def other(real_artifacts: list[dict[str, Any]]) -> dict[str, Any]:
    return copy.deepcopy(real_artifacts[1])


@pytest.fixture
def store(tmp_path: Path) -> ArtifactStore:
    return ArtifactStore(tmp_path / "tensorviz_artifacts")


def files_in(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_write_then_read_round_trips(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    path = store.write_artifact(artifact)
    assert path == store.root / f"{artifact['contentHash']}.json"
    assert json.loads(path.read_text("utf-8")) == artifact
    assert path.read_text("utf-8") == dump_json(artifact)
    assert store.read_artifact(artifact["contentHash"]) == artifact
    assert store.has_artifact(artifact["contentHash"])
    assert store.artifact_hashes() == [artifact["contentHash"]]


def test_atomic_write_leaves_no_temporary_files(store: ArtifactStore, artifact: dict[str, Any],
                                                other: dict[str, Any]) -> None:
    store.write_artifact(artifact)
    store.write_artifact(other)
    changed = {**artifact, "generatedAt": "2030-01-01T00:00:00+00:00"}
    store.write_artifact(changed)  # overwrite in place
    assert files_in(store.root) == sorted([
        f"{artifact['contentHash']}.json", f"{other['contentHash']}.json",
        "failures/.gitignore", "failures/.ledger", "failures/.lock",
    ])
    assert store.read_artifact(artifact["contentHash"]) == changed


def test_rewriting_identical_bytes_keeps_the_file(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    path = store.write_artifact(artifact)
    stat = path.stat()
    store.write_artifact(copy.deepcopy(artifact))
    assert path.stat().st_mtime_ns == stat.st_mtime_ns and path.stat().st_ino == stat.st_ino


def test_the_stored_bytes_digest_follows_the_file(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    """What a kept figure checks its artifacts by: the sha256 of the file as it is now, taken from the
    read that checked it while the file is unchanged, and from the new bytes once it is replaced."""
    import hashlib

    from sphinx_tensorviz.render.cache import artifact_key

    path = store.write_artifact(artifact)
    found = store.read_artifact(artifact["contentHash"])
    first = store.stored_sha256(artifact["contentHash"], found)
    assert first == hashlib.sha256(path.read_bytes()).hexdigest()
    store.write_artifact({**artifact, "generatedAt": "2030-01-01T00:00:00+00:00"})  # re-executed
    again = store.read_artifact(artifact["contentHash"])
    second = store.stored_sha256(artifact["contentHash"], again)
    assert second == hashlib.sha256(path.read_bytes()).hexdigest() != first
    assert store.stored_sha256(artifact["contentHash"], found) == second  # an old object: the file decides
    assert artifact_key(again, second) != artifact_key(again, first)


def _drop(key: str) -> Any:
    def change(a: dict[str, Any]) -> None:
        del a[key]
    return change


@pytest.mark.parametrize("damage", [
    _drop("data"),
    _drop("environment"),
    _drop("generatedAt"),
    lambda a: a.update(contentHash="not-a-hash"),
    lambda a: a.update(provenance="made_up"),
    lambda a: a.update(kind="synthetic"),
    lambda a: a["data"].update(values=[[[1.0]]]),
    lambda a: a["data"].update(values=[]),
    lambda a: a["data"].update(kind="bar-chart"),
    lambda a: a["environment"].update(backend="tpu"),
    lambda a: a.update(generatedAt="yesterday"),
    lambda a: a["data"]["values"][0].__setitem__(0, float("nan")),
], ids=["no-data", "no-environment", "no-generatedAt", "bad-hash", "bad-provenance", "bad-kind",
        "3d-values", "empty-values", "bad-data-kind", "bad-device", "bad-date", "nan"])
def test_invalid_artifacts_are_refused(store: ArtifactStore, artifact: dict[str, Any], damage: Any) -> None:
    content_hash = artifact["contentHash"]
    damage(artifact)
    with pytest.raises(ValueError):
        store.write_artifact(artifact)
    assert not (store.root / f"{content_hash}.json").exists()
    if store.root.exists():
        assert not [p for p in store.root.rglob("*") if p.name.endswith(".tmp")]


def test_schema_errors_name_the_field(artifact: dict[str, Any]) -> None:
    assert schema_errors(artifact) == []
    del artifact["stdout"]
    errors = schema_errors(artifact)
    assert len(errors) == 1 and "stdout" in errors[0]


def test_read_absent_is_none(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    assert store.read_artifact(artifact["contentHash"]) is None
    assert not store.has_artifact(artifact["contentHash"])
    assert store.artifact_hashes() == []


def test_read_truncated_is_a_problem(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    path = store.write_artifact(artifact)
    text = path.read_text("utf-8")
    path.write_text(text[: len(text) // 3], "utf-8")
    found = store.read_artifact(artifact["contentHash"])
    assert isinstance(found, StoreProblem)
    assert found.path == path
    assert "JSON" in found.reason


def test_read_schema_invalid_is_a_problem(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    path = store.write_artifact(artifact)
    path.write_text(json.dumps({"contentHash": artifact["contentHash"]}), "utf-8")
    found = store.read_artifact(artifact["contentHash"])
    assert isinstance(found, StoreProblem) and "schema" in found.reason


def test_read_misnamed_is_a_problem(store: ArtifactStore, artifact: dict[str, Any], other: dict[str, Any]) -> None:
    path = store.write_artifact(artifact)
    path.write_text(dump_json(other), "utf-8")  # valid artifact, wrong name
    found = store.read_artifact(artifact["contentHash"])
    assert isinstance(found, StoreProblem)
    assert other["contentHash"][:12] in found.reason and artifact["contentHash"][:12] in found.reason


def test_read_unreadable_is_a_problem(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    (store.root / f"{artifact['contentHash']}.json").mkdir(parents=True)  # a folder where a file should be
    found = store.read_artifact(artifact["contentHash"])
    assert isinstance(found, StoreProblem)


@pytest.mark.parametrize("name", ["../../etc/passwd", "A" * 64, "abc", "g" * 64, ""])
def test_paths_only_from_real_hashes(store: ArtifactStore, name: str) -> None:
    with pytest.raises(ValueError):
        store.artifact_path(name)
    with pytest.raises(ValueError):
        store.failure_path(name)


def test_artifact_hashes_ignores_other_files(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    store.write_artifact(artifact)
    (store.root / "notes.json").write_text("{}", "utf-8")
    (store.root / ("f" * 63 + ".json")).write_text("{}", "utf-8")
    assert store.artifact_hashes() == [artifact["contentHash"]]


# -- failure records ----------------------------------------------------------------------


def test_failures_live_in_an_ignored_folder(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    content_hash = artifact["contentHash"]
    record = {"subtype": "execution", "message": "ValueError: no", "traceback": "", "stdout": "", "timeout": None}
    store.write_failure(content_hash, record)
    path = store.root / "failures" / f"{content_hash}.json"
    assert path.is_file()
    assert json.loads(path.read_text("utf-8")) == {"contentHash": content_hash, **record}
    assert store.read_failure(content_hash) == {"contentHash": content_hash, **record}
    assert "*" in (store.root / "failures" / ".gitignore").read_text("utf-8").splitlines()
    assert not store.has_artifact(content_hash)
    assert not [p for p in store.root.rglob("*") if p.name.endswith(".tmp")]


def test_git_sees_artifacts_but_not_failures(store: ArtifactStore, artifact: dict[str, Any],
                                             other: dict[str, Any], tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    store.write_artifact(artifact)
    store.write_failure(other["contentHash"], {"subtype": "crash", "message": "died"})
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert status == [f"?? tensorviz_artifacts/{artifact['contentHash']}.json"]


def test_storing_the_artifact_clears_its_failure(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    content_hash = artifact["contentHash"]
    store.write_failure(content_hash, {"subtype": "timeout", "message": "slow", "timeout": 1.0})
    assert store.read_failure(content_hash) is not None
    store.write_artifact(artifact)
    assert store.read_failure(content_hash) is None
    assert not (store.root / "failures" / f"{content_hash}.json").exists()


def test_corrupt_or_misnamed_failure_records_count_as_none(store: ArtifactStore, artifact: dict[str, Any],
                                                           other: dict[str, Any]) -> None:
    content_hash = artifact["contentHash"]
    store.write_failure(content_hash, {"subtype": "crash", "message": "died"})
    path = store.root / "failures" / f"{content_hash}.json"
    path.write_text('{"contentHash": "', "utf-8")
    assert store.read_failure(content_hash) is None
    path.write_text(json.dumps({"contentHash": other["contentHash"], "subtype": "crash"}), "utf-8")
    assert store.read_failure(content_hash) is None
    path.write_text("[1, 2]", "utf-8")
    assert store.read_failure(content_hash) is None


def test_delete_artifact(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    store.write_artifact(artifact)
    store.delete_artifact(artifact["contentHash"])
    assert store.read_artifact(artifact["contentHash"]) is None
    store.delete_artifact(artifact["contentHash"])  # deleting twice is fine


def test_the_shipped_schema_is_a_valid_json_schema() -> None:
    """Checked here once rather than on every build (it costs a fresh build tens of milliseconds)."""
    import jsonschema

    from sphinx_tensorviz.store.schema import artifact_validator

    schema = artifact_validator().schema
    jsonschema.validators.validator_for(schema).check_schema(schema)


# -- entries that are not regular files (issue 24, point 23) ----------------------------------------


def test_the_ledger_is_never_written_through_a_link(store: ArtifactStore, artifact: dict[str, Any],
                                                    tmp_path: Path) -> None:
    """A ``failures/.ledger`` replaced by a link to a file elsewhere (a dotfile of the user): the store
    appends nothing to that file, starts a ledger of its own, and still vouches for its writes."""
    store.write_failure("f" * 64, {"subtype": "crash", "message": "died"})
    outside = tmp_path / "bashrc"
    outside.write_text("export PATH=/usr/bin\n", "utf-8")
    ledger = store.root / "failures" / ".ledger"
    ledger.unlink()
    ledger.symlink_to(outside)
    mark = store.ledger_mark()
    store.write_artifact(artifact)
    assert outside.read_text("utf-8") == "export PATH=/usr/bin\n"
    assert not ledger.is_symlink()
    assert (f"{artifact['contentHash']}.json", _sha256((store.root / f"{artifact['contentHash']}.json"))) in \
        store.written_since(mark)


def test_an_oversized_store_file_is_refused_unread(store: ArtifactStore, artifact: dict[str, Any]) -> None:
    """A sparse file of a terabyte where a failure record should be is refused by its size, not read."""
    content_hash = artifact["contentHash"]
    store.write_failure(content_hash, {"subtype": "crash", "message": "died"})
    path = store.root / "failures" / f"{content_hash}.json"
    with open(path, "r+b") as handle:
        handle.truncate(1 << 40)
    found = store.check_failure(content_hash)
    assert isinstance(found, StoreProblem) and "over the limit" in found.reason
    assert store.read_failure(content_hash) is None


def test_the_lock_and_the_failures_folder_are_never_used_through_a_link(store: ArtifactStore,
                                                                          artifact: dict[str, Any],
                                                                          tmp_path: Path) -> None:
    """A cloned course can carry ``failures/.lock`` as a link to a file of the user (opening a lock
    truncates it) or ``failures/`` as a link to another folder: the store truncates and writes nothing
    there; a link in place of the lock is replaced, and a linked ``failures/`` is refused (an OSError,
    which a build reports as a store it cannot write)."""
    outside = tmp_path / "bashrc"
    outside.write_text("export PATH=/usr/bin\n", "utf-8")
    (store.root / "failures").mkdir(parents=True)
    (store.root / "failures" / ".lock").symlink_to(outside)
    store.write_artifact(artifact)
    assert outside.read_text("utf-8") == "export PATH=/usr/bin\n"
    assert not (store.root / "failures" / ".lock").is_symlink()
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    shutil.rmtree(store.root / "failures")
    (store.root / "failures").symlink_to(elsewhere)
    with pytest.raises(OSError, match="symbolic link"):
        store.write_failure(artifact["contentHash"], {"subtype": "crash", "message": "died"})
    assert list(elsewhere.iterdir()) == []


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", [".ledger", ".lock"])
def test_no_store_file_is_written_through_a_hard_link(store: ArtifactStore, artifact: dict[str, Any],
                                                      tmp_path: Path, name: str) -> None:
    """Lesson code running as the user (or a shared checkout) can make ``failures/.ledger`` or
    ``failures/.lock`` a hard link to a file of the user's: a regular file, so the checks for links
    and FIFOs pass it. The store must not append to, truncate or chmod that file; it starts a file of
    its own, and still vouches for its writes."""
    outside = tmp_path / "bashrc"
    outside.write_text("export PATH=/usr/bin\n", "utf-8")
    outside.chmod(0o600)
    (store.root / "failures").mkdir(parents=True)
    entry = store.root / "failures" / name
    entry.hardlink_to(outside)
    mark = store.ledger_mark()
    store.write_artifact(artifact)
    store.write_failure("f" * 64, {"subtype": "crash", "message": "died"})
    assert outside.read_text("utf-8") == "export PATH=/usr/bin\n"
    assert outside.stat().st_mode & 0o777 == 0o600
    assert not entry.samefile(outside)
    assert (f"{artifact['contentHash']}.json", _sha256((store.root / f"{artifact['contentHash']}.json"))) in \
        store.written_since(mark)


def test_a_schema_error_in_a_large_artifact_is_a_short_message(artifact: dict[str, Any]) -> None:
    """jsonschema's message quotes the whole failing value: one bad cell in a 400 x 400 heatmap (or a
    value nested hundreds deep) made a warning of megabytes, printed by every build. Each message is
    cut to a readable length and still names the field."""
    artifact["data"]["values"] = [[0.5] * 400 for _ in range(400)]
    artifact["data"]["values"][7][3] = "not a number"
    artifact["data"]["rows"] = [f"r{i}" for i in range(400)]
    artifact["data"]["columns"] = [f"c{i}" for i in range(400)]
    errors = schema_errors(artifact)
    assert errors and all(len(error) <= 400 for error in errors), [len(e) for e in errors]
    assert any(error.startswith("data/values/7/3: ") for error in errors), errors  # the cell itself


def test_remembering_a_validated_file_never_follows_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The marker of a validated artifact lives in the user's cache, which a restored CI cache or other
    code can fill with links: a marker that is a link to a private file (``~/.ssh/id_rsa``, 0600) must
    not make the build chmod that file 0644 (readable by everyone), nor create a dangling link's target."""
    from sphinx_tensorviz.store.validated import _marker, passed_before, remember_passed

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    key = tmp_path / "id_rsa"
    key.write_text("PRIVATE\n")
    key.chmod(0o600)
    data, other = b'{"an": "artifact"}', b'{"another": "one"}'
    for marker, target in ((_marker(data), key), (_marker(other), tmp_path / "created-by-the-build")):
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.symlink_to(target)
    (tmp_path / "created-by-the-build").write_text("")  # a link to a regular file, for the moment
    assert not passed_before(other)  # a link vouches for nothing, even to a regular file
    (tmp_path / "created-by-the-build").unlink()
    remember_passed(data)
    remember_passed(other)
    assert key.stat().st_mode & 0o777 == 0o600 and key.read_text() == "PRIVATE\n"
    assert not (tmp_path / "created-by-the-build").exists()
    assert passed_before(data) and not _marker(data).is_symlink()  # the build's own marker took its place


@pytest.mark.parametrize("entry", ["fifo", "link-to-dev-zero"])
def test_a_kept_file_that_is_not_a_regular_file_is_made_again(tmp_path: Path, entry: str) -> None:
    """The drawing and import caches read their entries whole: a FIFO there (a restored CI cache, other
    code of the user) hung the build, a link to ``/dev/zero`` filled its memory. Such an entry is a
    miss: made again, and replaced by a regular file."""
    import os
    import threading

    from sphinx_tensorviz.core.kept_files import KeptFiles

    kept = KeptFiles(tmp_path / "kept")
    assert kept.text("ab" * 32, "v1", "svg", lambda: "<svg/>") == "<svg/>"
    (path,) = [p for p in (tmp_path / "kept").rglob("*.svg")]
    path.unlink()
    os.mkfifo(path) if entry == "fifo" else path.symlink_to("/dev/zero")
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(kept.text("ab" * 32, "v1", "svg", lambda: "<svg>2</svg>")),
                              daemon=True)
    reader.start()
    reader.join(timeout=30)  # a generous bound on a hang
    if reader.is_alive():
        with open(path, "wb"):  # let the blocked reader go (a writer for the FIFO)
            pass
        pytest.fail("reading a kept FIFO hung")
    assert found == ["<svg>2</svg>"]
    assert path.is_file() and not path.is_symlink()
