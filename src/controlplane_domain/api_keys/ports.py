"""The API keys' repository port (a unit of work's `api_keys`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.paging import PageRequest


class ApiKeyRepository(Protocol):
    async def add(self, key: ApiKey) -> None: ...

    async def get(self, organization_id: str, key_id: str, *, for_update: bool = False) -> ApiKey | None: ...

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        """Operator lookup across organizations: the key a presented credential names."""

    async def update(self, key: ApiKey) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]: ...
