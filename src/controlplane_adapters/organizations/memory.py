"""The organizations' settings in the memory store."""

from __future__ import annotations

from controlplane_domain.organizations.entity import OrganizationSettings


class MemoryOrganizationRepository:
    def __init__(self, rows: dict[str, OrganizationSettings]) -> None:
        self.rows = rows

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        return self.rows.get(organization_id)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        self.rows[settings.organization_id] = settings
