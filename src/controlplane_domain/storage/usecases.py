"""Storage use cases: upload (streamed, hashed, within the quota), read, download a range, list, delete, usage.

The order of writes (docs/storage.md): an upload's bytes go to a key of their own and are complete before the row
that names them commits; the bytes a replace or delete leaves behind are removed only after the commit. A crash
between the two leaves an unnamed object (garbage, never a row without bytes, never lost data)."""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, replace

from controlplane_domain.errors import Unavailable, found
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.ports import Ports, UnitOfWork
from controlplane_domain.retry import retry_transient
from controlplane_domain.storage.entity import (
    ByteRange,
    QuotaExceeded,
    StorageUsage,
    StoredFile,
    blob_key,
    check_content_type,
    normalise_path,
)
from controlplane_domain.storage.ports import BlobStore, Storage

log = logging.getLogger("controlplane.storage")


@dataclass(frozen=True, slots=True, kw_only=True)
class Upload:
    path: str
    content_type: str | None = None
    declared_size: int | None = None
    """The request's Content-Length, when it gave one: over the room left, refused before a byte is read."""


def require_storage(ports: Ports) -> Storage:
    if ports.storage is None:
        raise Unavailable("file storage is not configured on this server")
    return ports.storage


async def _quota(uow: UnitOfWork, organization_id: str, storage: Storage) -> int:
    settings = await uow.organizations.get_settings(organization_id)
    own = settings.storage_quota_bytes if settings is not None else None
    return storage.default_quota_bytes if own is None else own


async def _require(uow: UnitOfWork, organization_id: str, path: str, *, lock: bool = False) -> StoredFile:
    return found(await uow.stored_files.find(organization_id, path, for_update=lock), "file", path)


async def _discard(blobs: BlobStore, key: str) -> None:
    """Remove bytes no row names any more; a failure leaves garbage, logged, never an error to the caller."""
    try:
        await blobs.delete(key)
    except Exception:
        log.warning("could not remove the unreferenced storage object %s", key, exc_info=True)


async def _room(ports: Ports, storage: Storage, organization_id: str, path: str) -> tuple[int, int, int]:
    """The quota, the bytes used, and the bytes an upload to `path` may take (what it replaces counts as free)."""
    async with ports.read() as uow:
        quota = await _quota(uow, organization_id, storage)
        usage = await uow.stored_files.usage(organization_id)
        current = await uow.stored_files.find(organization_id, path)
    return quota, usage.bytes_used, quota - usage.bytes_used + (current.size if current else 0)


async def put_file(
    ports: Ports, organization_id: str, upload: Upload, body: AsyncIterable[bytes]
) -> tuple[StoredFile, bool]:
    """Store the body at the path (created, or replaced whole); the file, and whether it is new.

    Reading stops as soon as the body passes the room the quota leaves (QuotaExceeded), and nothing is kept."""
    storage = require_storage(ports)
    path = normalise_path(upload.path)
    content_type = check_content_type(upload.content_type)
    quota, used, room = await _room(ports, storage, organization_id, path)
    if upload.declared_size is not None and upload.declared_size > room:
        raise QuotaExceeded(quota, used)
    digest = hashlib.sha256()
    size = 0

    async def counted() -> AsyncIterator[bytes]:
        nonlocal size
        async for chunk in body:
            size += len(chunk)
            if size > room:
                raise QuotaExceeded(quota, used)
            digest.update(chunk)
            yield chunk

    key = blob_key(ports.ids.new_id())
    await storage.blobs.put(key, counted())
    written = StoredFile(
        id=ports.ids.new_id(), organization_id=organization_id, path=path, size=size, content_type=content_type,
        sha256=digest.hexdigest(), blob_key=key, created_at=ports.clock.now(), updated_at=ports.clock.now(),
    )  # fmt: skip
    try:
        stored, replaced = await _record(ports, storage, written)
    except BaseException:
        await _discard(storage.blobs, key)
        raise
    if replaced is not None:
        await _discard(storage.blobs, replaced.blob_key)
    return stored, replaced is None


@retry_transient
async def _record(ports: Ports, storage: Storage, written: StoredFile) -> tuple[StoredFile, StoredFile | None]:
    """Name the written bytes by the file's row: the quota checked again under the organization's lock (another
    upload may have finished meanwhile); the file, and the file it replaced."""
    organization_id = written.organization_id
    async with ports.uow() as uow:
        usage = await uow.stored_files.usage(organization_id, lock=True)
        quota = await _quota(uow, organization_id, storage)
        current = await uow.stored_files.find(organization_id, written.path, for_update=True)
        if usage.bytes_used - (current.size if current else 0) + written.size > quota:
            raise QuotaExceeded(quota, usage.bytes_used)
        now = ports.clock.now()
        if current is None:
            stored = replace(written, created_at=now, updated_at=now)
            await uow.stored_files.add(stored)
        else:
            stored = replace(
                current, size=written.size, content_type=written.content_type, sha256=written.sha256,
                blob_key=written.blob_key, updated_at=now,
            )  # fmt: skip
            await uow.stored_files.update(stored)
        await uow.commit()
    return stored, current


async def get_file(ports: Ports, organization_id: str, path: str) -> StoredFile:
    require_storage(ports)
    async with ports.read() as uow:
        return await _require(uow, organization_id, normalise_path(path))


async def open_file(ports: Ports, stored: StoredFile, wanted: ByteRange | None = None) -> AsyncIterator[bytes]:
    """The bytes of this version of the file (all, or the range), opened. BlobMissing when the version was replaced
    or deleted since its row was read: the caller reads the row again (`read_attempts`), so that a download is of
    one version, whole."""
    start, stop = (wanted.start, wanted.stop) if wanted is not None else (0, stored.size)
    return await require_storage(ports).blobs.open(stored.blob_key, start, stop)


READ_ATTEMPTS = 3


def too_busy() -> Unavailable:
    """What a download answers when the file was replaced under it READ_ATTEMPTS times in a row."""
    return Unavailable("the file changes faster than it can be read; try again")


@retry_transient
async def _forget(ports: Ports, organization_id: str, path: str) -> StoredFile:
    async with ports.uow() as uow:
        stored = await _require(uow, organization_id, path, lock=True)
        await uow.stored_files.delete(organization_id, path)
        await uow.commit()
    return stored


async def delete_file(ports: Ports, organization_id: str, path: str) -> None:
    """Delete the file: its row first (it is gone for everyone at commit), then its bytes."""
    storage = require_storage(ports)
    stored = await _forget(ports, organization_id, normalise_path(path))
    await _discard(storage.blobs, stored.blob_key)


async def list_files(ports: Ports, organization_id: str, page: PageRequest, prefix: str = "") -> Page[StoredFile]:
    require_storage(ports)
    async with ports.read() as uow:
        items, total = await uow.stored_files.list_page(organization_id, page, unicodedata.normalize("NFC", prefix))
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


async def storage_usage(ports: Ports, organization_id: str) -> StorageUsage:
    storage = require_storage(ports)
    async with ports.read() as uow:
        usage = await uow.stored_files.usage(organization_id)
        quota = await _quota(uow, organization_id, storage)
    return StorageUsage(files=usage.files, bytes_used=usage.bytes_used, quota_bytes=quota)
