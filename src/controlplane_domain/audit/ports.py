"""The audit log's repository."""

from __future__ import annotations

from typing import Protocol

from controlplane_domain.audit.entity import AuditEvent, AuditFilter
from controlplane_domain.paging import PageRequest


class AuditRepository(Protocol):
    async def add(self, event: AuditEvent) -> None:
        """Append `event` in the unit of work's transaction."""

    async def get(self, organization_id: str, event_id: str) -> AuditEvent | None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, where: AuditFilter
    ) -> tuple[list[AuditEvent], int]:
        """A page of the organization's events that `where` keeps, newest first (occurred_at, then id,
        descending), and how many it keeps in all."""
        ...
