"""Idempotency records: the first response to a creating request, replayed for the same key and body."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

IDEMPOTENCY_TTL = timedelta(hours=24)


class RecordState(StrEnum):
    IN_FLIGHT = "in_flight"
    DONE = "done"


@dataclass(frozen=True, slots=True, kw_only=True)
class IdempotencyRecord:
    organization_id: str
    key: str
    fingerprint: str
    state: RecordState
    created_at: datetime
    expires_at: datetime
    status_code: int | None = None
    content_type: str | None = None
    body: bytes | None = None
