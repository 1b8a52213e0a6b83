"""Organization settings set by an operator: the rate-limit tier and figures."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Tier(StrEnum):
    STANDARD = "standard"
    ENTERPRISE = "enterprise"


@dataclass(frozen=True, slots=True, kw_only=True)
class OrganizationSettings:
    """`rate_limit_per_minute` and `worker_rate_limit_per_minute` apply to the enterprise tier only."""

    organization_id: str
    tier: Tier = Tier.STANDARD
    rate_limit_per_minute: int | None = None
    worker_rate_limit_per_minute: int | None = None
    storage_quota_bytes: int | None = None
    """The organization's own storage quota (None: CONTROLPLANE_STORAGE_QUOTA_BYTES), any tier."""
    updated_at: datetime | None = None

    def api_limit(self, standard: int) -> int:
        if self.tier is Tier.ENTERPRISE and self.rate_limit_per_minute is not None:
            return self.rate_limit_per_minute
        return standard

    def worker_limit(self, standard: int) -> int:
        if self.tier is Tier.ENTERPRISE and self.worker_rate_limit_per_minute is not None:
            return self.worker_rate_limit_per_minute
        return standard
