"""The audit log in the memory store."""

from __future__ import annotations

from controlplane_adapters.memory.base import sorted_page
from controlplane_domain.audit.entity import AuditEvent, AuditFilter
from controlplane_domain.paging import PageRequest


class MemoryAuditRepository:
    def __init__(self, rows: dict[str, AuditEvent]) -> None:
        self.rows = rows

    async def add(self, event: AuditEvent) -> None:
        self.rows[event.id] = event

    async def get(self, organization_id: str, event_id: str) -> AuditEvent | None:
        event = self.rows.get(event_id)
        return event if event is not None and event.organization_id == organization_id else None

    async def list_page(
        self, organization_id: str, page: PageRequest, where: AuditFilter
    ) -> tuple[list[AuditEvent], int]:
        kept = (e for e in self.rows.values() if e.organization_id == organization_id and where.keeps(e))
        return sorted_page(kept, lambda event: (event.occurred_at, event.id), page)
