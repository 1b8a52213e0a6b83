"""The API keys in the memory store."""

from __future__ import annotations

from controlplane_adapters.memory.base import sorted_page
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest


class MemoryApiKeyRepository:
    def __init__(self, rows: dict[str, ApiKey]) -> None:
        self.rows = rows

    async def add(self, key: ApiKey) -> None:
        if key.id in self.rows:
            raise Conflict("api key id collision")
        self.rows[key.id] = key

    async def get(self, organization_id: str, key_id: str, *, for_update: bool = False) -> ApiKey | None:
        key = self.rows.get(key_id)
        return key if key is not None and key.organization_id == organization_id else None

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        return self.rows.get(key_id)

    async def update(self, key: ApiKey) -> None:
        self.rows[key.id] = key

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]:
        mine = (key for key in self.rows.values() if key.organization_id == organization_id)
        return sorted_page(mine, lambda key: (key.created_at, key.id), page)
