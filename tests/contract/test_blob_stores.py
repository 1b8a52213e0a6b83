"""The BlobStore contract on every backend: the local directory, and S3 (moto's server on loopback)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import pytest

from controlplane_adapters.settings.storage import StorageSettings
from controlplane_adapters.storage.local import LocalBlobStore
from controlplane_adapters.storage.wiring import s3_store
from controlplane_domain.storage.entity import BlobMissing
from controlplane_domain.storage.ports import BlobStore
from tests.s3 import CREDENTIALS, REGION, new_bucket

MIB = 1024 * 1024


class Refused(Exception):
    """What a test's body raises midway (as a quota passed or a client gone would)."""


@pytest.fixture(params=["local", "s3"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "local":
        return LocalBlobStore(tmp_path / "blobs", durable=True)
    endpoint: str = request.getfixturevalue("s3_endpoint")
    settings = StorageSettings(
        backend="s3", s3_bucket=new_bucket(endpoint), s3_endpoint_url=endpoint, s3_region=REGION, s3_prefix="cp/",
        s3_access_key_id=CREDENTIALS["aws_access_key_id"], s3_secret_access_key=CREDENTIALS["aws_secret_access_key"],
    )  # fmt: skip
    return s3_store(settings)


async def body(*chunks: bytes, fail_after: int | None = None) -> AsyncIterator[bytes]:
    for index, chunk in enumerate(chunks):
        if fail_after is not None and index == fail_after:
            raise Refused()
        yield chunk


async def read(blobs: BlobStore, key: str, start: int = 0, stop: int | None = None) -> bytes:
    return b"".join([chunk async for chunk in await blobs.open(key, start, stop)])


def pattern(size: int, seed: int = 0) -> bytes:
    """`size` bytes that differ from one offset to the next (a misplaced part shows)."""
    block = hashlib.sha256(str(seed).encode()).digest() * 2048  # 64 KiB
    return (block * (size // len(block) + 1))[:size]


def chunked(data: bytes, size: int) -> Iterable[bytes]:
    return [data[offset : offset + size] for offset in range(0, len(data), size)]


async def test_what_is_put_is_read_back_whole(blobs: BlobStore) -> None:
    await blobs.put("ab/abc", body(b"hello ", b"", b"world"))
    assert await read(blobs, "ab/abc") == b"hello world"
    assert await blobs.keys() == ["ab/abc"]


async def test_ranges_read_what_they_name(blobs: BlobStore) -> None:
    await blobs.put("ab/abc", body(b"0123456789"))
    assert await read(blobs, "ab/abc", 2, 5) == b"234"
    assert await read(blobs, "ab/abc", 7) == b"789"
    assert await read(blobs, "ab/abc", 0, 10) == b"0123456789"
    assert await read(blobs, "ab/abc", 3, 3) == b""


async def test_an_empty_object_exists(blobs: BlobStore) -> None:
    await blobs.put("ab/empty", body())
    assert await read(blobs, "ab/empty", 0, 0) == b""
    assert await read(blobs, "ab/empty") == b""
    assert await blobs.keys() == ["ab/empty"]


async def test_opening_a_missing_key_fails_before_the_first_chunk(blobs: BlobStore) -> None:
    for start, stop in ((0, None), (0, 0), (1, 5)):
        with pytest.raises(BlobMissing):
            await blobs.open("ab/missing", start, stop)


async def test_a_second_put_replaces_the_object_whole(blobs: BlobStore) -> None:
    await blobs.put("ab/abc", body(b"first version, long"))
    await blobs.put("ab/abc", body(b"second"))
    assert await read(blobs, "ab/abc") == b"second"
    assert await blobs.keys() == ["ab/abc"]


async def test_a_body_that_fails_midway_keeps_nothing(blobs: BlobStore) -> None:
    with pytest.raises(Refused):
        await blobs.put("ab/abc", body(b"part one", b"part two", fail_after=1))
    assert await blobs.keys() == []
    with pytest.raises(BlobMissing):
        await blobs.open("ab/abc")


async def test_a_failed_replace_leaves_the_previous_object(blobs: BlobStore) -> None:
    await blobs.put("ab/abc", body(b"kept"))
    with pytest.raises(Refused):
        await blobs.put("ab/abc", body(b"partial", b"never", fail_after=1))
    assert await read(blobs, "ab/abc") == b"kept"
    assert await blobs.keys() == ["ab/abc"]


async def test_objects_of_several_parts_come_back_in_order(blobs: BlobStore) -> None:
    """19 MiB in odd chunks: S3 sends it as a multipart upload of 8 MiB parts and a short last one."""
    data = pattern(19 * MIB + 123)
    await blobs.put("cd/big", body(*chunked(data, 65_537)))
    assert hashlib.sha256(await read(blobs, "cd/big")).digest() == hashlib.sha256(data).digest()
    assert await read(blobs, "cd/big", 8 * MIB - 3, 8 * MIB + 3) == data[8 * MIB - 3 : 8 * MIB + 3]
    assert await blobs.keys() == ["cd/big"]


async def test_a_large_body_that_fails_after_parts_were_sent_keeps_nothing(blobs: BlobStore) -> None:
    """Past the first part (S3: an upload in progress, with parts), then refused: the upload is aborted."""
    chunks = chunked(pattern(12 * MIB), MIB)
    with pytest.raises(Refused):
        await blobs.put("cd/big", body(*chunks, fail_after=10))
    assert await blobs.keys() == []


async def test_delete_removes_and_a_missing_key_is_no_error(blobs: BlobStore) -> None:
    await blobs.put("ab/one", body(b"1"))
    await blobs.put("ab/two", body(b"2"))
    await blobs.delete("ab/one")
    await blobs.delete("ab/one")
    await blobs.delete("zz/never")
    assert await blobs.keys() == ["ab/two"]
    with pytest.raises(BlobMissing):
        await blobs.open("ab/one")


@pytest.mark.parametrize("key", ["../escape", "/abs", "ab/../x", "AB/upper", "ab//x", "ab/x.tmp", ""])
async def test_keys_that_are_not_blob_keys_are_refused(blobs: BlobStore, key: str) -> None:
    with pytest.raises(ValueError, match="not a blob key"):
        await blobs.put(key, body(b"x"))
    with pytest.raises(ValueError, match="not a blob key"):
        await blobs.open(key)
    assert await blobs.keys() == []
