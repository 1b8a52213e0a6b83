"""What the integrations area needs from a store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from controlplane_domain.integrations.entity import CustomIntegration, Integration
from controlplane_domain.repository import Repository


class IntegrationRepository(Repository[Integration], Protocol):
    async def add(self, integration: Integration) -> None:
        """Store a new integration; Conflict when its name is taken in the organization."""

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[Integration]:
        """The organization's integrations among `integration_ids` (any order; unknown ids left out)."""

    async def update(self, integration: Integration) -> None:
        """Replace a stored integration; Conflict when its new name is taken."""

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Integration]:
        """Operator only, across every organization: up to `limit` integrations with sealed fields not sealed by
        the key `key_id` (for a key rotation)."""


class CustomIntegrationRepository(Repository[CustomIntegration], Protocol):
    async def add(self, integration: CustomIntegration) -> None:
        """Store a new custom integration; Conflict when its name is taken in the organization."""

    async def get_many(self, organization_id: str, integration_ids: Sequence[str]) -> list[CustomIntegration]:
        """The organization's custom integrations among `integration_ids` (any order; unknown ids left out)."""

    async def update(self, integration: CustomIntegration) -> None:
        """Replace a stored custom integration; Conflict when its new name is taken."""
