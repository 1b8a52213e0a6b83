"""The idempotency records in the memory store, by organization and key."""

from __future__ import annotations

from datetime import datetime

from controlplane_domain.errors import Conflict
from controlplane_domain.idempotency.entity import IdempotencyRecord


class MemoryIdempotencyRepository:
    def __init__(self, rows: dict[tuple[str, str], IdempotencyRecord]) -> None:
        self.rows = rows

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        return self.rows.get((organization_id, key))

    async def add(self, record: IdempotencyRecord) -> None:
        if (record.organization_id, record.key) in self.rows:
            raise Conflict("idempotency key in use")
        self.rows[(record.organization_id, record.key)] = record

    async def save(self, record: IdempotencyRecord) -> None:
        self.rows[(record.organization_id, record.key)] = record

    async def delete(self, organization_id: str, key: str) -> None:
        self.rows.pop((organization_id, key), None)

    async def delete_expired(self, now: datetime, limit: int) -> int:
        expired = [where for where, record in self.rows.items() if record.expires_at <= now][:limit]
        for where in expired:
            del self.rows[where]
        return len(expired)
