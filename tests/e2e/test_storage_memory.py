"""A real server moves a 64 MiB file up and down with its memory flat (the 1 GiB figures: docs/benchmarks.md)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest
from benchmarks.run import rss_kb
from benchmarks.storage_memory import CHUNK, Sampler, generated

from tests.e2e.conftest import Server
from tests.support import SERVICE_KEY, bearer

pytestmark = pytest.mark.e2e

MIB = 1024 * 1024
SIZE = 64 * MIB
FAR_BELOW = 16 * MIB  # a quarter of the file: a body held whole would take it all (and more)


def test_a_large_file_streams_through_the_server(sqlite_server: Server, tmp_path: Path) -> None:
    pid = sqlite_server.process.pid
    url = f"{sqlite_server.url}/api/v1/storage/files/large/blob.bin"
    sent, received = hashlib.sha256(), hashlib.sha256()
    with Sampler(pid) as sampler, httpx.Client(headers=bearer(SERVICE_KEY), timeout=120) as client:
        idle = rss_kb(pid) * 1024
        sampler.reset()
        uploaded = client.put(url, content=generated(SIZE, sent))
        assert uploaded.status_code == 201, uploaded.text
        assert uploaded.json()["sha256"] == sent.hexdigest()
        upload_growth = sampler.peak() * 1024 - idle
        sampler.reset()
        with client.stream("GET", url) as download:
            assert download.status_code == 200
            assert download.headers["content-length"] == str(SIZE)
            for chunk in download.iter_raw(CHUNK):
                received.update(chunk)
        download_growth = sampler.peak() * 1024 - idle
    assert received.hexdigest() == sent.hexdigest()
    assert upload_growth < FAR_BELOW, f"the server grew by {upload_growth / MIB:.1f} MiB during the upload"
    assert download_growth < FAR_BELOW, f"the server grew by {download_growth / MIB:.1f} MiB during the download"
    stored = list((tmp_path / "e2e.db.storage").rglob("*"))
    assert [path.stat().st_size for path in stored if path.is_file()] == [SIZE]  # the default: beside the database
