"""The API keys in the memory store."""

from __future__ import annotations

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.api_keys.entity import ApiKey


class MemoryApiKeyRepository(MemoryRepository[ApiKey]):
    noun = "api key"
    unique_field = "id"

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        return self.rows.get(key_id)
