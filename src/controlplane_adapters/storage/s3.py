"""The S3-compatible blob store (AWS S3, MinIO, Ceph, R2, ...), through boto3.

An upload is a multipart upload fed part by part as the body arrives (8 MiB parts: at most one part is held in
memory); the object exists only once `CompleteMultipartUpload` succeeds, and a failed or refused upload is
aborted, so S3 keeps nothing of it. A body smaller than one part is a single `PutObject`, equally atomic. boto3
is synchronous: every call runs in a thread (`asyncio.to_thread`); a download reads the response's stream a
megabyte at a time, in threads too."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from controlplane_adapters.storage.local import CHUNK_BYTES, check_key
from controlplane_domain.errors import Unavailable
from controlplane_domain.storage.entity import BlobMissing

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

PART_BYTES = 8 * 1024 * 1024
"""S3 parts are at least 5 MiB (but the last) and at most 10,000 an upload: 8 MiB parts hold objects to 78 GiB."""
MISSING = frozenset({"NoSuchKey", "404", "NotFound"})
T = TypeVar("T")


def _failure(exc: Exception) -> Unavailable:
    return Unavailable(f"file storage (S3) failed: {exc}")


async def _call(function: Callable[..., T], **arguments: Any) -> T:
    try:
        return await asyncio.to_thread(function, **arguments)
    except (BotoCoreError, ClientError) as exc:
        raise _failure(exc) from exc


class S3BlobStore:
    """Keys as objects of `bucket`, under `prefix` (e.g. `controlplane/`)."""

    def __init__(
        self, client: S3Client, bucket: str, prefix: str = "", *, part_bytes: int = PART_BYTES,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:  # fmt: skip
        self.client = client
        self.bucket = bucket
        self.prefix = prefix
        self.part_bytes = part_bytes
        self.chunk_bytes = chunk_bytes

    def _key(self, key: str) -> str:
        return self.prefix + check_key(key)

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        name = self._key(key)
        buffer = bytearray()
        upload: str | None = None
        parts: list[CompletedPartTypeDef] = []

        async def send_part(body: bytearray) -> None:
            nonlocal upload
            if upload is None:
                started = await _call(self.client.create_multipart_upload, Bucket=self.bucket, Key=name)
                upload = started["UploadId"]
            number = len(parts) + 1
            sent = await _call(
                self.client.upload_part, Bucket=self.bucket, Key=name, UploadId=upload, PartNumber=number,
                Body=body,  # (the part itself: a copy would double what an upload holds)
            )  # fmt: skip
            parts.append({"ETag": sent["ETag"], "PartNumber": number})

        try:
            async for chunk in chunks:
                buffer += chunk
                if len(buffer) >= self.part_bytes:
                    part, buffer = buffer, bytearray()
                    await send_part(part)
            if upload is None:
                await _call(self.client.put_object, Bucket=self.bucket, Key=name, Body=bytes(buffer))
                return
            if buffer:
                await send_part(buffer)
            await _call(
                self.client.complete_multipart_upload, Bucket=self.bucket, Key=name, UploadId=upload,
                MultipartUpload={"Parts": parts},
            )  # fmt: skip
        except BaseException:
            if upload is not None:
                await asyncio.shield(self._abort(name, upload))
            raise

    async def _abort(self, name: str, upload: str) -> None:
        # (a failure leaves the upload to the bucket's lifecycle rule for abandoned uploads: docs/storage.md)
        with contextlib.suppress(Unavailable):
            await _call(self.client.abort_multipart_upload, Bucket=self.bucket, Key=name, UploadId=upload)

    async def open(self, key: str, start: int = 0, stop: int | None = None) -> AsyncIterator[bytes]:
        name = self._key(key)
        arguments: dict[str, Any] = {"Bucket": self.bucket, "Key": name}
        try:
            if stop is not None and stop <= start:  # nothing to read (an empty file): only whether it exists
                await asyncio.to_thread(self.client.head_object, **arguments)
                return _nothing()
            if start or stop is not None:
                arguments["Range"] = f"bytes={start}-{'' if stop is None else stop - 1}"
            response = await asyncio.to_thread(self.client.get_object, **arguments)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in MISSING:
                raise BlobMissing(key) from None
            raise _failure(exc) from exc
        except BotoCoreError as exc:
            raise _failure(exc) from exc
        body = response["Body"]
        return self._chunks(lambda: asyncio.to_thread(body.read, self.chunk_bytes), body.close)

    async def _chunks(self, read: Callable[[], Awaitable[bytes]], close: Callable[[], None]) -> AsyncIterator[bytes]:
        try:
            while data := await read():
                yield data
        except (BotoCoreError, ClientError) as exc:
            raise _failure(exc) from exc
        finally:
            close()

    async def delete(self, key: str) -> None:
        await _call(self.client.delete_object, Bucket=self.bucket, Key=self._key(key))

    async def keys(self) -> list[str]:
        def listing() -> list[str]:
            found: list[str] = []
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix):
                found.extend(item["Key"] for item in page.get("Contents", []))
            uploads = self.client.get_paginator("list_multipart_uploads")
            for listed in uploads.paginate(Bucket=self.bucket, Prefix=self.prefix):
                found.extend(item["Key"] for item in listed.get("Uploads", []))
            return sorted(name[len(self.prefix) :] for name in found)

        try:
            return await asyncio.to_thread(listing)
        except (BotoCoreError, ClientError) as exc:
            raise _failure(exc) from exc


async def _nothing() -> AsyncIterator[bytes]:
    empty: tuple[bytes, ...] = ()
    for chunk in empty:  # an async generator that yields nothing
        yield chunk
