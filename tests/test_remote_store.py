"""A shared artifact store on a real S3 API (moto's server on localhost) and a read-only HTTP mirror.

The same NumPy, JAX and PyTorch root is built once against the local default store and
once against S3: the objects in the bucket must be the local artifacts byte for byte,
except their time stamp. Then: a second machine (a fresh cache) finds everything cached,
failure records live in the bucket, two builds write one store at the same time, a
build reads an HTTP mirror in cache-only mode, tampered objects are refused, and the
``tensorviz`` commands (status, gc, show, push, pull) work on the bucket.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Build, artifact_files, copy_root, run_sphinx, without_generated_at, without_run_facts
from remote_util import S3, http_server, s3  # noqa: F401 - s3 is a fixture
from sphinx_tensorviz.cli import main
from sphinx_tensorviz.store.artifacts import ArtifactStore, StoreProblem, dump_json
from sphinx_tensorviz.store.remote import RemoteStore

pytestmark = pytest.mark.sphinx


def remote_build(src: Path, url: str, cache: Path, **conf: object) -> Build:
    overrides = {"tensorviz_artifact_store": url, "tensorviz_cache_dir": str(cache), **conf}
    return run_sphinx(src, confoverrides=overrides)


def objects(s3: S3, url: str) -> dict[str, bytes]:
    """relative key -> bytes of every object under ``url``."""
    fs = s3.fs()
    base = url.removeprefix("s3://")
    return {key[len(base) + 1:]: fs.cat_file(key) for key in fs.find(base)}


def blank_time(text: bytes) -> bytes:
    """The facts of one run (``generatedAt``, ``execution``) blanked, as conftest does for files."""
    assert text.count(b'"generatedAt": ') == 1
    return without_run_facts(text.decode("utf-8"))


@pytest.fixture(scope="module")
def heatmaps(tmp_path_factory: pytest.TempPathFactory, s3: S3) -> dict[str, object]:  # noqa: F811
    """The heatmap root built locally and against S3 (the expensive part, shared)."""
    base = tmp_path_factory.mktemp("remote")
    local = copy_root("heatmap", base / "local")
    local_build = run_sphinx(local)
    remote = copy_root("heatmap", base / "remote")
    url = s3.url("heatmap")
    remote_build_ = remote_build(remote, url, base / "cache-a")
    return {"local": local, "local_build": local_build, "remote": remote, "remote_build": remote_build_,
            "url": url, "base": base}


def test_s3_store_holds_the_local_artifacts_byte_for_byte(heatmaps: dict, s3: S3) -> None:  # noqa: F811
    assert heatmaps["local_build"].summary == heatmaps["remote_build"].summary == (4, 0, 0)
    assert heatmaps["remote_build"].tensorviz_warnings() == []
    local = artifact_files(heatmaps["local"])
    stored = objects(s3, heatmaps["url"])
    assert set(stored) == {f"{h}.json" for h in local}  # no failures/, nothing else
    for content_hash, path in local.items():
        assert blank_time(stored[f"{content_hash}.json"]) == without_generated_at(path)
    # nothing was written into the source folder: the store is the bucket, the cache is elsewhere
    assert not (heatmaps["remote"] / "tensorviz_artifacts").exists()
    cached = {p.stem for p in (heatmaps["base"] / "cache-a").glob("*.json")}
    assert cached == set(local)


def test_another_machine_reads_everything_from_the_bucket(heatmaps: dict, s3: S3) -> None:  # noqa: F811
    other = copy_root("heatmap", heatmaps["base"] / "other-machine")
    built = remote_build(other, heatmaps["url"], heatmaps["base"] / "cache-b")
    assert built.summary == (0, 4, 0)
    assert built.tensorviz_warnings() == []
    assert heatmaps["local_build"].html("numpy").count("<svg") == built.html("numpy").count("<svg") > 0
    fetched = {p.stem: p.read_bytes() for p in (heatmaps["base"] / "cache-b").glob("*.json")}
    stored = objects(s3, heatmaps["url"])
    assert {f"{h}.json": b for h, b in fetched.items()} == stored  # the cache holds the objects as they are


def test_a_tampered_object_is_refused_and_executed_again(heatmaps: dict, s3: S3, tmp_path: Path) -> None:  # noqa: F811
    url = s3.url("tampered")
    pushed = main(["push", str(heatmaps["local"] / "tensorviz_artifacts"), url])
    assert pushed == 0
    fs = s3.fs()
    victim = sorted(fs.find(url.removeprefix("s3://")))[0]
    artifact = json.loads(fs.cat_file(victim))
    artifact["request"]["seed"] = artifact["request"].get("seed", 0) + 1  # no longer hashes to its name
    fs.pipe_file(victim, dump_json(artifact).encode())
    store = RemoteStore(url, tmp_path / "cache")
    found = store.read_artifact(Path(victim).stem)
    assert isinstance(found, StoreProblem)
    assert "does not hash to its name" in found.reason and found.path.name == Path(victim).name
    assert not (tmp_path / "cache" / Path(victim).name).exists()  # not cached either


def test_failure_records_live_in_the_bucket(s3: S3, tmp_path: Path) -> None:  # noqa: F811
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["myst_parser", "sphinx_tensorviz"]\n'
                                 'exclude_patterns = ["_build"]\n', "utf-8")
    (src / "index.md").write_text("# Fails\n\n```{tv-heatmap}\n:alt: Never drawn.\n\n"
                                  "raise ValueError('exploded on purpose')\n```\n", "utf-8")
    url = s3.url("failures")
    first = remote_build(src, url, tmp_path / "cache-a")
    assert first.summary == (1, 0, 1)
    (key,) = objects(s3, url)
    assert key.startswith("failures/")
    record = json.loads(objects(s3, url)[key])
    assert "exploded on purpose" in record["traceback"] + record["message"]
    # a second machine with an empty cache sees the recorded failure and does not run the code again
    second = remote_build(src, url, tmp_path / "cache-b")
    assert second.summary == (0, 0, 1)
    assert any("exploded on purpose" in w for w in second.tensorviz_warnings())
    # a failure recorded on a machine with another Python environment does not block this one
    assert len(record["environment"]) == 64
    s3.fs().pipe_file(f"{url.removeprefix('s3://')}/{key}",
                      json.dumps({**record, "environment": "0" * 64}).encode())
    third = remote_build(src, url, tmp_path / "cache-c")
    assert third.summary == (1, 0, 1)
    assert json.loads(objects(s3, url)[key])["environment"] == record["environment"]  # recorded again, here


def test_two_concurrent_builds_write_one_store(s3: S3, tmp_path: Path) -> None:  # noqa: F811
    url = s3.url("concurrent")
    env = {**os.environ, **s3.env}
    procs = []
    for name in ("a", "b"):
        src = copy_root("cli", tmp_path / name)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", f"tensorviz_artifact_store={url}",
             "-D", f"tensorviz_cache_dir={tmp_path / f'cache-{name}'}", str(src), str(src / "_build")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for proc in procs:
        output, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, output
        assert "WARNING" not in output, output
    stored = objects(s3, url)
    assert len(stored) == 2 and all(k.endswith(".json") and "/" not in k for k in stored)
    fresh = RemoteStore(url, tmp_path / "cache-check")
    for key in stored:
        assert isinstance(fresh.read_artifact(key.removesuffix(".json")), dict)  # each one whole and valid


def test_cache_only_build_reads_a_read_only_http_mirror(heatmaps: dict, tmp_path: Path) -> None:
    served = tmp_path / "site"
    (served / "artifacts").mkdir(parents=True)
    for path in artifact_files(heatmaps["local"]).values():
        (served / "artifacts" / path.name).write_bytes(path.read_bytes())
    src = copy_root("heatmap", tmp_path / "rtd")
    with http_server(served) as base:
        url = f"{base}/artifacts/"
        built = remote_build(src, url, tmp_path / "cache", tensorviz_execution_mode="cache-only")
        assert built.summary == (0, 4, 0)
        assert built.tensorviz_warnings() == []
        assert "Traceback" not in built.html("numpy") and built.html("numpy").count("<svg") > 0
        # a miss in auto mode executes, and says the mirror cannot take the result
        (src / "numpy.md").write_text((src / "numpy.md").read_text("utf-8").replace("arange", "ones"), "utf-8")
        again = remote_build(src, url, tmp_path / "cache", tensorviz_execution_mode="auto")
    assert again.summary[0] >= 1
    assert any("read-only" in w and "tensorviz.store" in w for w in again.tensorviz_warnings())


# -- the tensorviz command on a bucket --------------------------------------------------

def test_push_pull_round_trip_and_cli_on_s3(heatmaps: dict, s3: S3, tmp_path: Path,  # noqa: F811
                                            capsys: pytest.CaptureFixture[str]) -> None:
    url = s3.url("pushed")
    local_store = heatmaps["local"] / "tensorviz_artifacts"
    assert main(["push", str(local_store), url]) == 0
    assert "4 artifact(s) copied, 0 already there, 0 refused" in capsys.readouterr().out
    assert main(["push", str(local_store), url]) == 0  # idempotent
    assert "0 artifact(s) copied, 4 already there" in capsys.readouterr().out
    pulled = tmp_path / "pulled"
    assert main(["pull", url, str(pulled)]) == 0
    capsys.readouterr()
    assert {p.name: p.read_bytes() for p in pulled.glob("*.json")} == {
        p.name: p.read_bytes() for p in artifact_files(heatmaps["local"]).values()}

    project = ["-D", f"tensorviz_artifact_store={url}", "-D", f"tensorviz_cache_dir={tmp_path / 'cache'}"]
    assert main(["status", str(heatmaps["local"]), "--check", *project]) == 0
    assert "4 directives: 4 cached" in capsys.readouterr().out
    some = next(iter(artifact_files(heatmaps["local"])))
    assert main(["show", some[:10], str(heatmaps["local"]), *project]) == 0
    assert f"{url}/{some}.json" in capsys.readouterr().out  # where it is, as a URL
    assert main(["verify", str(heatmaps["local"]), "--doc", "numpy", *project]) == 0
    assert "2 of 2 artifacts reproduced" in capsys.readouterr().out
    # an orphan in the bucket: gc lists it, and --delete removes it from the bucket
    orphan = json.loads((local_store / f"{some}.json").read_text("utf-8"))
    orphan_store = ArtifactStore(tmp_path / "orphan")
    orphan["request"]["seed"] = 12345
    from sphinx_tensorviz.core.hashing import digest

    orphan["contentHash"] = digest(orphan["request"])
    orphan_store.write_artifact(orphan)
    assert main(["push", str(tmp_path / "orphan"), url]) == 0
    capsys.readouterr()
    assert main(["gc", str(heatmaps["local"]), *project]) == 0
    assert "1 unused artifact(s)" in capsys.readouterr().out
    assert main(["gc", str(heatmaps["local"]), "--delete", *project]) == 0
    assert f"{orphan['contentHash']}.json" not in objects(s3, url)
    assert len(objects(s3, url)) == 4


def test_push_refuses_a_broken_artifact(s3: S3, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / f"{'ab' * 32}.json").write_text('{"not": "an artifact"}\n', "utf-8")
    url = s3.url("broken")
    assert main(["push", str(folder), url]) == 1
    out, err = capsys.readouterr()
    assert "0 artifact(s) copied" in out and "1 refused" in out
    assert "not copied" in err and "schema" in err
    assert objects(s3, url) == {}


def test_an_unreachable_store_warns_and_the_build_goes_on(tmp_path: Path) -> None:
    from remote_util import free_port

    src = copy_root("cli", tmp_path / "cli")
    env = {**os.environ, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}", "AWS_ACCESS_KEY_ID": "x",
           "AWS_SECRET_ACCESS_KEY": "y", "AWS_DEFAULT_REGION": "us-east-1", "AWS_MAX_ATTEMPTS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-D", "tensorviz_artifact_store=s3://nowhere/course",
         "-D", f"tensorviz_cache_dir={tmp_path / 'cache'}", str(src), str(src / "_build")],
        env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert any("cannot be read (the store s3://nowhere/course cannot be used" in w for w in warnings), warnings
    assert any("cannot write to the artifact store s3://nowhere/course" in w and "shown from memory" in w
               for w in warnings), warnings
    assert (src / "_build" / "index.html").read_text("utf-8").count("<svg") >= 2  # both figures drawn
    # the end-of-build upload (issue 24, point 21) cannot reach it either: said once, at a figure
    ensured = [w for w in warnings if "cannot make sure the store s3://nowhere/course holds" in w]
    assert len(ensured) == 1 and f"{src / 'index.md'}:" in ensured[0], warnings


def test_signed_artifacts_are_checked_by_readers_that_require_them(heatmaps: dict, s3: S3, tmp_path: Path,  # noqa: F811
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from sphinx_tensorviz.store.signing import KEY_VARIABLE

    signed, unsigned = s3.url("signed"), s3.url("unsigned")
    local_store = str(heatmaps["local"] / "tensorviz_artifacts")
    assert main(["push", local_store, unsigned]) == 0  # no key in this environment
    monkeypatch.setenv(KEY_VARIABLE, "ci-secret")
    assert main(["push", local_store, signed]) == 0
    assert sum(k.startswith("signatures/") and k.endswith(".sig") for k in objects(s3, signed)) == 4
    assert not any(k.startswith("signatures/") for k in objects(s3, unsigned))

    def reader(url: str, cache: str) -> Build:
        src = copy_root("heatmap", tmp_path / cache)
        return remote_build(src, url, tmp_path / f"cache-{cache}", tensorviz_execution_mode="cache-only",
                            tensorviz_require_signature=True)

    assert reader(signed, "good").summary == (0, 4, 0)
    refused = reader(unsigned, "unsigned").tensorviz_warnings()
    assert len(refused) == 4 and all("is not signed" in w and "tensorviz.store" in w for w in refused)
    monkeypatch.setenv(KEY_VARIABLE, "someone-else")
    forged = reader(signed, "forged").tensorviz_warnings()
    assert len(forged) == 4 and all("signature that does not match" in w for w in forged)
    # a cache filled by a reader that did not check is checked again once signatures are required
    plain = copy_root("heatmap", tmp_path / "plain")
    assert remote_build(plain, unsigned, tmp_path / "cache-shared", tensorviz_execution_mode="cache-only"
                        ).summary == (0, 4, 0)
    monkeypatch.setenv(KEY_VARIABLE, "ci-secret")
    again = remote_build(plain, unsigned, tmp_path / "cache-shared", tensorviz_execution_mode="cache-only",
                         tensorviz_require_signature=True)
    assert len(again.tensorviz_warnings()) == 4


def test_the_course_builds_from_its_artifacts_in_a_bucket(s3: S3, tmp_path: Path,  # noqa: F811
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    lessons = Path(__file__).resolve().parents[1] / "lessons"
    committed = {p.name: p.read_bytes() for p in (lessons / "tensorviz_artifacts").glob("*.json")}
    url = s3.url("course")
    assert main(["push", str(lessons / "tensorviz_artifacts"), url]) == 0
    capsys.readouterr()
    assert objects(s3, url) == committed  # byte for byte
    src = tmp_path / "lessons"
    shutil.copytree(lessons, src, ignore=shutil.ignore_patterns("_build", "__pycache__", "tensorviz_artifacts"))
    built = remote_build(src, url, tmp_path / "cache", tensorviz_execution_mode="cache-only")
    assert built.summary == (0, len(committed), 0)
    assert built.tensorviz_warnings() == []
    assert {p.name: p.read_bytes() for p in (tmp_path / "cache").glob("*.json")} == committed


def test_a_recreated_empty_bucket_is_filled_from_the_warm_cache(heatmaps: dict, s3: S3, tmp_path: Path,  # noqa: F811
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24, point 21: this machine's cache holds every artifact, the bucket is new and empty (recreated,
    or a restarted server). ``status --check`` says what the bucket lacks; the build executes nothing and ends
    with the bucket holding every artifact it used, byte for byte as cached; then ``status --check`` passes."""
    cache = tmp_path / "warm-cache"
    shutil.copytree(heatmaps["base"] / "cache-a", cache)
    cached = {p.name: p.read_bytes() for p in cache.glob("*.json")}
    assert len(cached) == 4
    url = s3.url("recreated")
    assert objects(s3, url) == {}
    src = copy_root("heatmap", tmp_path / "src")
    project = [str(src), "--check", "-D", f"tensorviz_artifact_store={url}", "-D", f"tensorviz_cache_dir={cache}"]
    assert main(["status", *project]) == 1
    out = capsys.readouterr().out
    assert out.count(f"not in the store {url}") == 4, out
    built = remote_build(src, url, cache)
    assert built.summary == (0, 4, 0)
    assert built.tensorviz_warnings() == []
    assert objects(s3, url) == cached  # every artifact the build used, uploaded as it was cached
    assert "4 artifact(s) the store lacked" in built.status
    assert main(["status", *project]) == 0
    assert "4 directives: 4 cached" in capsys.readouterr().out
    again = remote_build(src, url, cache)  # the bucket is complete: nothing more is uploaded
    assert again.summary == (0, 4, 0) and "the store lacked" not in again.status


def test_a_truncated_object_in_the_bucket_is_replaced_from_the_warm_cache(heatmaps: dict, s3: S3,  # noqa: F811
                                                                         tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The bucket lists every artifact, but one object is cut short (an interrupted upload, a tool that
    wrote an empty object) and another is empty. This machine reads its cached copies and never sees
    them, and another machine (Read the Docs) finds them unusable. A listing gives each object's size:
    an object whose size is not that of the checked copy is replaced, and the bucket ends as cached."""
    cache = tmp_path / "warm-cache"
    shutil.copytree(heatmaps["base"] / "cache-a", cache)
    cached = {p.name: p.read_bytes() for p in cache.glob("*.json")}
    url = s3.url("truncated")
    fs = s3.fs()
    base = url.removeprefix("s3://")
    for number, (name, data) in enumerate(sorted(cached.items())):
        fs.pipe_file(f"{base}/{name}", data[: len(data) // 2] if number == 0 else b"" if number == 1 else data)
    assert objects(s3, url) != cached
    src = copy_root("heatmap", tmp_path / "src")
    project = [str(src), "--check", "-D", f"tensorviz_artifact_store={url}", "-D", f"tensorviz_cache_dir={cache}"]
    assert main(["status", *project]) == 1  # status --check sees it too, not only the build
    out = capsys.readouterr().out
    assert out.count("(an object cut short); the next build uploads it") == 2, out
    built = remote_build(src, url, cache)
    assert built.summary == (0, 4, 0)
    assert built.tensorviz_warnings() == []
    assert objects(s3, url) == cached
    assert "2 artifact(s) the store lacked" in built.status
    assert main(["status", *project]) == 0
