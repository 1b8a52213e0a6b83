"""Storage in the memory store: the stored files' metadata (the bytes are in the blob store)."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.paging import PageRequest, counted
from controlplane_domain.storage.entity import StoredFile, Usage


class MemoryStoredFileRepository(MemoryRepository[StoredFile]):
    noun = "file"
    audited = StoredFile.audited
    unique_field = "path"

    def _mine(self, organization_id: str) -> list[StoredFile]:
        return [stored for stored in self.rows.values() if stored.organization_id == organization_id]

    async def find(self, organization_id: str, path: str, *, for_update: bool = False) -> StoredFile | None:
        return next((stored for stored in self._mine(organization_id) if stored.path == path), None)

    async def delete(self, organization_id: str, path: str) -> None:
        found = await self.find(organization_id, path)
        if found is not None:
            del self.rows[found.id]

    async def list_page(
        self, organization_id: str, page: PageRequest, prefix: str = ""
    ) -> tuple[list[StoredFile], int]:
        ordered = sorted(
            (stored for stored in self._mine(organization_id) if stored.path.startswith(prefix)),
            key=lambda stored: stored.path,
        )
        return ordered[page.offset : page.offset + page.limit], counted(len(ordered), page)

    async def usage(self, organization_id: str, *, lock: bool = False) -> Usage:
        mine = self._mine(organization_id)  # (units of work take turns: the lock is the store's own)
        return Usage(files=len(mine), bytes_used=sum(stored.size for stored in mine))
