"""Secrets in the memory store: the secrets (sealed values) and their recorded accesses."""

from __future__ import annotations

from collections.abc import Sequence

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.paging import PageRequest
from controlplane_domain.secrets.entity import Secret, SecretAccess


class MemorySecretRepository(MemoryRepository[Secret]):
    noun = "secret"
    audited = Secret.audited

    def __init__(self, rows: dict[str, Secret], accesses: dict[str, SecretAccess]) -> None:
        super().__init__(rows)
        self.accesses = accesses

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for access_id in [key for key, access in self.accesses.items() if access.secret_id == object_id]:
                del self.accesses[access_id]

    async def get_by_names(
        self, organization_id: str, names: Sequence[str], *, for_update: bool = False
    ) -> list[Secret]:
        wanted = set(names)
        return [s for s in self.rows.values() if s.organization_id == organization_id and s.name in wanted]

    async def add_accesses(self, accesses: Sequence[SecretAccess]) -> None:
        for access in accesses:
            self.accesses[access.id] = access

    async def access_page(
        self, organization_id: str, secret_id: str, page: PageRequest
    ) -> tuple[list[SecretAccess], int]:
        mine = (
            access
            for access in self.accesses.values()
            if access.organization_id == organization_id and access.secret_id == secret_id
        )
        return sorted_page(mine, lambda access: (access.accessed_at, access.id), page)

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Secret]:
        others = sorted((s for s in self.rows.values() if s.sealed.key_id != key_id), key=lambda s: s.id)
        return others[:limit]
