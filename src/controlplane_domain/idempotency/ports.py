"""The idempotency records' repository port (a unit of work's `idempotency`)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from controlplane_domain.idempotency.entity import IdempotencyRecord


class IdempotencyRepository(Protocol):
    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None: ...

    async def add(self, record: IdempotencyRecord) -> None:
        """Store a new record; Conflict when one exists for the key (a concurrent first request)."""

    async def save(self, record: IdempotencyRecord) -> None:
        """Replace the record for (organization, key)."""

    async def delete(self, organization_id: str, key: str) -> None: ...

    async def delete_expired(self, now: datetime, limit: int) -> int:
        """Delete up to `limit` records whose `expires_at` is `now` or before; how many were deleted."""
