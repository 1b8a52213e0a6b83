"""The organizations' repository port (a unit of work's `organizations`)."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.organizations.entity import OrganizationSettings


class OrganizationRepository(Protocol):
    async def get_settings(self, organization_id: str) -> OrganizationSettings | None: ...

    async def save_settings(self, settings: OrganizationSettings) -> None: ...
