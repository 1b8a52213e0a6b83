"""The API keys' repository port (a unit of work's `api_keys`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.repository import Repository


class ApiKeyRepository(Repository[ApiKey], Protocol):
    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        """Operator lookup across organizations: the key a presented credential names."""
