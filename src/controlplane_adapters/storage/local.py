"""The local-directory blob store (the default): one file a key under a root directory.

An upload is written to a temporary file in its final directory (`.<name>.<random>.tmp`), flushed to disk
(fsync), then renamed over the key (`os.replace`, atomic on POSIX) and the directory synced: a reader sees the
whole object or none, and a row committed after `put` names bytes that survive a crash. File work runs in
threads (`asyncio.to_thread`), a megabyte at a time, so the event loop never waits on the disk."""

from __future__ import annotations

import asyncio
import os
import re
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path
from typing import BinaryIO

from controlplane_domain.errors import Unavailable
from controlplane_domain.storage.entity import BlobMissing

KEY = re.compile(r"[0-9a-z][0-9a-z-]*(/[0-9a-z][0-9a-z-]*)*")
CHUNK_BYTES = 1024 * 1024


def check_key(key: str) -> str:
    """A key as the domain makes them (`blob_key`): lowercase letters, digits and dashes in `/` segments; no other
    text may name a file under the root."""
    if KEY.fullmatch(key) is None:
        raise ValueError(f"not a blob key: {key!r}")
    return key


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _finish(handle: BinaryIO, temporary: Path, target: Path, durable: bool) -> None:
    handle.flush()
    if durable:
        os.fsync(handle.fileno())
    handle.close()
    os.replace(temporary, target)
    if durable:
        _sync_directory(target.parent)


def _abandon(handle: BinaryIO, temporary: Path) -> None:
    handle.close()
    temporary.unlink(missing_ok=True)


def _open_new(path: Path) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("xb")


class LocalBlobStore:
    """Keys as files under `root` (created when missing). `durable=False` skips the fsyncs (tests on tmpfs)."""

    def __init__(self, root: Path | str, *, chunk_bytes: int = CHUNK_BYTES, durable: bool = True) -> None:
        self.root = Path(root)
        self.chunk_bytes = chunk_bytes
        self.durable = durable

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        target = self._path(key)
        temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
        try:
            handle = await asyncio.to_thread(_open_new, temporary)
        except OSError as exc:
            raise Unavailable(f"file storage cannot write: {exc.strerror or exc}") from exc
        try:
            buffer = bytearray()
            async for chunk in chunks:
                buffer += chunk
                if len(buffer) >= self.chunk_bytes:
                    await asyncio.to_thread(handle.write, buffer)
                    buffer.clear()
            await asyncio.to_thread(handle.write, buffer)
            await asyncio.to_thread(_finish, handle, temporary, target, self.durable)
        except BaseException as exc:
            await asyncio.shield(asyncio.to_thread(_abandon, handle, temporary))
            if isinstance(exc, OSError):
                raise Unavailable(f"file storage cannot write: {exc.strerror or exc}") from exc
            raise

    async def open(self, key: str, start: int = 0, stop: int | None = None) -> AsyncIterator[bytes]:
        path = self._path(key)
        try:
            handle = await asyncio.to_thread(path.open, "rb")
        except FileNotFoundError:
            raise BlobMissing(key) from None
        except OSError as exc:
            raise Unavailable(f"file storage cannot read: {exc.strerror or exc}") from exc
        return self._chunks(handle, start, stop)

    async def _chunks(self, handle: BinaryIO, start: int, stop: int | None) -> AsyncIterator[bytes]:
        try:
            await asyncio.to_thread(handle.seek, start)
            remaining = stop - start if stop is not None else None
            while remaining is None or remaining > 0:
                size = self.chunk_bytes if remaining is None else min(self.chunk_bytes, remaining)
                data = await asyncio.to_thread(handle.read, size)
                if not data:
                    return
                if remaining is not None:
                    remaining -= len(data)
                yield data
        finally:
            handle.close()

    async def delete(self, key: str) -> None:
        try:
            await asyncio.to_thread(self._path(key).unlink, missing_ok=True)
        except OSError as exc:
            raise Unavailable(f"file storage cannot delete: {exc.strerror or exc}") from exc

    async def keys(self) -> list[str]:
        def walk() -> list[str]:
            if not self.root.exists():
                return []
            return sorted(path.relative_to(self.root).as_posix() for path in self.root.rglob("*") if path.is_file())

        return await asyncio.to_thread(walk)
