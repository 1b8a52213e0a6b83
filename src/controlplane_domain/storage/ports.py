"""What storage needs: a repository of the files' metadata (in the unit of work) and a store of their bytes."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.storage.entity import StoredFile, Usage


class StoredFileRepository(Protocol):
    async def find(self, organization_id: str, path: str, *, for_update: bool = False) -> StoredFile | None:
        """The organization's file at `path` (normalised), or None."""

    async def add(self, stored: StoredFile) -> None:
        """Store a new file's row; Conflict when the path is taken in the organization."""

    async def update(self, stored: StoredFile) -> None: ...

    async def delete(self, organization_id: str, path: str) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, prefix: str = ""
    ) -> tuple[list[StoredFile], int]:
        """A page of the organization's files whose path starts with `prefix`, in path order, and their total."""

    async def usage(self, organization_id: str, *, lock: bool = False) -> Usage:
        """The organization's files and bytes; `lock` (in a writing unit of work) holds the organization's storage
        until commit, so that two uploads cannot both pass the quota on the same figures."""


class BlobStore(Protocol):
    """Bytes under opaque keys (`[0-9a-z-]` segments joined by `/`), written whole or not at all.

    The same contract suite runs on every implementation (tests/contract/test_blob_stores.py)."""

    async def put(self, key: str, chunks: AsyncIterable[bytes]) -> None:
        """Store the bytes `chunks` yields under `key`, read as they come (never all at once). The object appears
        whole once the iteration ended; when it raises (a quota passed, a client gone) nothing is kept under
        `key`, not even part of an upload, and the exception goes on."""

    async def open(self, key: str, start: int = 0, stop: int | None = None) -> AsyncIterator[bytes]:
        """The object's bytes from `start` up to `stop` (exclusive; None: its end), in chunks. Raises BlobMissing
        here, before the first chunk, when there is no object under `key`."""

    async def delete(self, key: str) -> None:
        """Remove the object; nothing happens when there is none."""

    async def keys(self) -> list[str]:
        """Every key that holds bytes, finished or not (a local temporary file, an S3 multipart upload in
        progress): what an operator's sweep, and the tests of "nothing kept", look at."""


@dataclass(frozen=True, slots=True)
class Storage:
    """The blob store and the quota of an organization that has none of its own (CONTROLPLANE_STORAGE_QUOTA_BYTES)."""

    blobs: BlobStore
    default_quota_bytes: int
