"""Real remote stores on localhost for the tests: an S3 API (moto's server mode) and a plain HTTP server.

``s3`` is session-scoped: one moto server per test session, because fsspec caches its
file systems per process and the endpoint must not move under them. Credentials and
the endpoint reach s3fs the way they would in CI, through ``AWS_*`` environment
variables (never through ``conf.py``). Each test makes its own bucket prefix.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("s3fs", reason="the [s3] extra is not installed")
pytest.importorskip("moto", reason="moto[server] (test extra) is not installed")

BUCKET = "course-artifacts"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class S3:
    """The moto server: its endpoint, the environment a client needs, and a bucket in it."""

    endpoint: str
    env: dict[str, str]

    def url(self, name: str = "") -> str:
        """A fresh ``s3://`` prefix for one test."""
        return f"s3://{BUCKET}/{name or 'store'}-{secrets.token_hex(4)}"

    def fs(self) -> object:
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, use_listings_cache=False)


@pytest.fixture(scope="session")
def s3() -> Iterator[S3]:
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        import boto3

        boto3.client("s3").create_bucket(Bucket=BUCKET)
        yield S3(env["AWS_ENDPOINT_URL"], env)
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def http_server(folder: Path) -> Iterator[str]:
    """Serve ``folder`` read-only over HTTP on localhost; yields its base URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
