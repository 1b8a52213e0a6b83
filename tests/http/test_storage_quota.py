"""Storage's quota (413 QUOTA_EXCEEDED, reading stopped, nothing kept), streaming, tenancy, and the S3 backend."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from controlplane_adapters.clock import ManualClock
from controlplane_adapters.settings.storage import StorageSettings
from controlplane_domain.ports import Ports
from controlplane_domain.storage import usecases
from tests.conftest import build_test_app
from tests.s3 import CREDENTIALS, REGION, new_bucket
from tests.support import DEFAULT_ORG, SERVICE_KEY, bearer, make_jwt

FILES = "/api/v1/storage/files"
OTHER = bearer(make_jwt("org-other", sub="intruder", roles=["admin"]))


def set_quota(client: TestClient[Any], quota: int | None, org: str = DEFAULT_ORG) -> None:
    body = {"tier": "standard", "storage_quota_bytes": quota}
    response = client.put(f"/api/v1/organizations/{org}/settings", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["storage_quota_bytes"] == quota


def blob_keys(app: Litestar) -> list[str]:
    ports: Ports = app.state["ports"]
    assert ports.storage is not None
    return asyncio.run(ports.storage.blobs.keys())


def assert_quota_exceeded(response: Any) -> None:
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "QUOTA_EXCEEDED"


def test_an_upload_past_the_quota_is_413_and_nothing_is_kept(client: TestClient[Any]) -> None:
    set_quota(client, 100)
    assert client.put(f"{FILES}/kept.bin", content=b"k" * 60).status_code == 201
    keys = blob_keys(client.app)
    assert_quota_exceeded(client.put(f"{FILES}/new.bin", content=b"n" * 41))
    assert_quota_exceeded(client.put(f"{FILES}/kept.bin", content=b"r" * 101))  # a replace past it, too
    assert client.get("/api/v1/storage/usage").json() == {"files": 1, "bytes_used": 60, "quota_bytes": 100}
    assert [item["path"] for item in client.get(FILES).json()["items"]] == ["kept.bin"]
    assert client.get(f"{FILES}/kept.bin").content == b"k" * 60
    assert client.get(f"{FILES}/new.bin").status_code == 404
    assert blob_keys(client.app) == keys


def test_what_a_replace_frees_counts_and_the_quota_can_be_met_exactly(client: TestClient[Any]) -> None:
    set_quota(client, 100)
    assert client.put(f"{FILES}/a.bin", content=b"a" * 60).status_code == 201
    assert client.put(f"{FILES}/a.bin", content=b"b" * 100).status_code == 200
    assert client.put(f"{FILES}/empty", content=b"").status_code == 201
    assert client.get("/api/v1/storage/usage").json()["bytes_used"] == 100
    set_quota(client, None)  # back to the server's default (CONTROLPLANE_STORAGE_QUOTA_BYTES)
    assert client.get("/api/v1/storage/usage").json()["quota_bytes"] == StorageSettings().quota_bytes


def test_the_quota_is_the_organization_own(client: TestClient[Any]) -> None:
    set_quota(client, 10)
    assert client.put(f"{FILES}/big.bin", content=b"x" * 50, headers=OTHER).status_code == 201
    assert_quota_exceeded(client.put(f"{FILES}/big.bin", content=b"x" * 50))


def test_only_an_operator_sets_a_quota(client: TestClient[Any]) -> None:
    settings = f"/api/v1/organizations/{DEFAULT_ORG}/settings"
    admin = bearer(make_jwt(DEFAULT_ORG, roles=["admin"]))
    response = client.put(settings, json={"tier": "standard", "storage_quota_bytes": 10**12}, headers=admin)
    assert response.status_code == 403
    negative = client.put(settings, json={"tier": "standard", "storage_quota_bytes": -1})
    assert negative.status_code == 422


def test_another_organization_never_sees_a_file(client: TestClient[Any]) -> None:
    assert client.put(f"{FILES}/private/plan.txt", content=b"ours").status_code == 201
    for method in ("GET", "HEAD", "DELETE"):
        response = client.request(method, f"{FILES}/private/plan.txt", headers=OTHER)
        assert response.status_code == 404, (method, response.text)
        if method != "HEAD":
            assert response.json()["error"]["code"] == "NOT_FOUND"
    assert client.get(FILES, headers=OTHER).json()["total"] == 0
    assert client.get("/api/v1/storage/usage", headers=OTHER).json()["files"] == 0
    # The same path in its own organization is its own file; ours is unchanged
    assert client.put(f"{FILES}/private/plan.txt", content=b"theirs", headers=OTHER).status_code == 201
    assert client.get(f"{FILES}/private/plan.txt").content == b"ours"
    assert client.get(f"{FILES}/private/plan.txt", headers=OTHER).content == b"theirs"


def asgi_client(app: Litestar) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver", headers=bearer(SERVICE_KEY)
    )


@pytest.fixture
def memory_app(tmp_path: Path) -> Iterator[Litestar]:
    with TestClient(build_test_app("memory", tmp_path, ManualClock())) as started:
        yield started.app


async def test_reading_stops_as_soon_as_the_body_passes_the_quota(memory_app: Litestar) -> None:
    """A body of 100 chunks of 1 KiB against a quota of 10 KiB: 413 after the 11th chunk, the rest never read."""
    pulled = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(100):
            pulled += 1
            yield b"z" * 1024

    async with asgi_client(memory_app) as client:
        quota = await client.put(f"/api/v1/organizations/{DEFAULT_ORG}/settings",
                                 json={"tier": "standard", "storage_quota_bytes": 10 * 1024})  # fmt: skip
        assert quota.status_code == 200
        assert_quota_exceeded(await client.put(f"{FILES}/stream.bin", content=chunks()))
        assert pulled <= 12
        assert (await client.get("/api/v1/storage/usage")).json()["files"] == 0
    assert await asyncio.to_thread(blob_keys, memory_app) == []


async def test_a_declared_length_past_the_quota_is_refused_before_reading(memory_app: Litestar) -> None:
    pulled = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal pulled
        pulled += 1
        yield b"z"

    async with asgi_client(memory_app) as client:
        await client.put(f"/api/v1/organizations/{DEFAULT_ORG}/settings",
                         json={"tier": "standard", "storage_quota_bytes": 10})  # fmt: skip
        response = await client.put(f"{FILES}/declared", content=chunks(), headers={"content-length": "11"})
        assert_quota_exceeded(response)
    assert pulled == 0


async def test_a_client_gone_midway_leaves_nothing(memory_app: Litestar) -> None:
    sent = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        sent += 1
        if sent > 3:
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": b"p" * 1000, "more_body": True}

    messages: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "PUT", "scheme": "http",
        "path": f"{FILES}/partial.bin", "raw_path": f"{FILES}/partial.bin".encode(), "query_string": b"",
        "root_path": "", "headers": [(b"authorization", f"Bearer {SERVICE_KEY}".encode()), (b"host", b"testserver")],
        "client": ("127.0.0.1", 1), "server": ("testserver", 80),
    }  # fmt: skip
    await memory_app(scope, receive, send)  # type: ignore[arg-type]
    assert messages[0]["status"] == 400
    assert b"UPLOAD_INTERRUPTED" in messages[1]["body"]
    assert await asyncio.to_thread(blob_keys, memory_app) == []
    async with asgi_client(memory_app) as client:
        assert (await client.get(f"{FILES}/partial.bin")).status_code == 404


def test_the_s3_backend_behind_the_same_routes(tmp_path: Path, s3_endpoint: str) -> None:
    """The app on S3 (moto's server): a round trip of several parts, a range, a replace, the quota, a delete."""
    settings = StorageSettings(
        backend="s3", s3_bucket=new_bucket(s3_endpoint), s3_endpoint_url=s3_endpoint, s3_region=REGION,
        s3_access_key_id=CREDENTIALS["aws_access_key_id"], s3_secret_access_key=CREDENTIALS["aws_secret_access_key"],
    )  # fmt: skip
    body = bytes(range(256)) * (40 * 4096 + 3)  # 40 MiB and a little: five parts of 8 MiB and one short
    with TestClient(build_test_app("sqlite", tmp_path, ManualClock(), storage=settings)) as client:
        client.headers.update(bearer(SERVICE_KEY))
        assert client.put(f"{FILES}/s3/big.bin", content=body).status_code == 201
        assert client.get(f"{FILES}/s3/big.bin").content == body
        ranged = client.get(f"{FILES}/s3/big.bin", headers={"range": "bytes=8388606-8388609"})
        assert (ranged.status_code, ranged.content) == (206, body[8388606:8388610])
        assert client.put(f"{FILES}/s3/big.bin", content=b"small").status_code == 200
        assert len(blob_keys(client.app)) == 1  # the replaced version's object is gone
        set_quota(client, 10)
        assert_quota_exceeded(client.put(f"{FILES}/s3/over.bin", content=b"o" * 11))
        assert client.delete(f"{FILES}/s3/big.bin").status_code == 204
        assert blob_keys(client.app) == []


class ReplacedOnFirstOpen:
    """A blob store whose first `open` finds the file replaced just before (as a concurrent upload would do)."""

    def __init__(self, ports: Ports, path: str, body: bytes) -> None:
        assert ports.storage is not None
        self.ports, self.inner, self.path, self.body = ports, ports.storage.blobs, path, body
        self.replaced = False

    async def open(self, key: str, start: int = 0, stop: int | None = None) -> AsyncIterator[bytes]:
        if not self.replaced:
            self.replaced = True
            await usecases.put_file(self.ports, DEFAULT_ORG, usecases.Upload(path=self.path), one_chunk(self.body))
        return await self.inner.open(key, start, stop)

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        await self.inner.put(key, chunks)

    async def delete(self, key: str) -> None:
        await self.inner.delete(key)

    async def keys(self) -> list[str]:
        return await self.inner.keys()


async def one_chunk(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def test_a_download_replaced_under_it_is_of_the_new_version_whole(memory_app: Litestar) -> None:
    async with asgi_client(memory_app) as client:
        assert (await client.put(f"{FILES}/race.txt", content=b"first version")).status_code == 201
        ports: Ports = memory_app.state["ports"]
        assert ports.storage is not None
        racing = ReplacedOnFirstOpen(ports, "race.txt", b"second")
        memory_app.state["ports"] = replace(ports, storage=replace(ports.storage, blobs=racing))
        downloaded = await client.get(f"{FILES}/race.txt", headers={"range": "bytes=0-8"})
    assert racing.replaced
    assert (downloaded.status_code, downloaded.content) == (206, b"second")
    assert downloaded.headers["content-range"] == "bytes 0-5/6"
    assert downloaded.headers["etag"] == f'"{hashlib.sha256(b"second").hexdigest()}"'
