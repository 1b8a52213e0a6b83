"""Integrations and custom integrations in the memory store."""

from __future__ import annotations

from collections.abc import Sequence

from controlplane_adapters.memory.base import MemoryRepository
from controlplane_domain.integrations.entity import CustomIntegration, Integration


class MemoryIntegrationRepository(MemoryRepository[Integration]):
    noun = "integration"
    audited = Integration.audited

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[Integration]:
        found = (self.rows.get(integration_id) for integration_id in set(integration_ids))
        return [item for item in found if item is not None and item.organization_id == organization_id]

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Integration]:
        others = (item for item in self.rows.values() if item.sealed is not None and item.sealed.key_id != key_id)
        return sorted(others, key=lambda item: item.id)[:limit]


class MemoryCustomIntegrationRepository(MemoryRepository[CustomIntegration]):
    noun = "custom integration"
    audited = CustomIntegration.audited

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[CustomIntegration]:
        found = (self.rows.get(integration_id) for integration_id in set(integration_ids))
        return [item for item in found if item is not None and item.organization_id == organization_id]
