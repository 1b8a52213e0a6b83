"""Organization settings wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from controlplane_domain.organizations.entity import Tier
from controlplane_wire.base import Request

PerMinute = Annotated[int, Meta(ge=1, le=1_000_000)]
QuotaBytes = Annotated[int, Meta(ge=0, le=2**63 - 1, description="bytes of files the organization may keep")]


class OrganizationSettingsUpdate(Request, kw_only=True):
    tier: Tier
    rate_limit_per_minute: PerMinute | None = None
    worker_rate_limit_per_minute: PerMinute | None = None
    storage_quota_bytes: QuotaBytes | None = None


class OrganizationSettings(msgspec.Struct, kw_only=True):
    organization_id: str
    tier: Tier
    rate_limit_per_minute: int | None
    worker_rate_limit_per_minute: int | None
    storage_quota_bytes: int | None
    effective_rate_limit_per_minute: int
    effective_worker_rate_limit_per_minute: int
    updated_at: datetime | None
