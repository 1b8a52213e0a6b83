"""Which per-minute figure applies to a request: the standard tier, or the organization's own (cached briefly);
the service key has its own."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from controlplane_domain.organizations.entity import OrganizationSettings
from controlplane_domain.organizations.usecases import settings_for
from controlplane_domain.ports import Ports, SecretHasher

SETTINGS_TTL_SECONDS = 5.0


@dataclass
class LimitPolicy:
    """Standard figures from configuration; enterprise figures from the organization's settings."""

    ports: Ports
    hasher: SecretHasher
    standard_per_minute: int = 100
    worker_per_minute: int = 1200
    anonymous_per_minute: int = 100
    webhook_per_minute: int = 60
    """Deliveries a minute to one job's webhook (counted per job, whoever sends them)."""
    service_per_minute: int = 100_000
    """The service key's own figure (the operator's: no tenant tier applies to it), API and worker traffic apart."""
    _cache: dict[str, tuple[float, OrganizationSettings]] = field(default_factory=dict)

    async def _settings(self, organization_id: str) -> OrganizationSettings:
        now = time.monotonic()
        cached = self._cache.get(organization_id)
        if cached is not None and cached[0] > now:
            return cached[1]
        settings = await settings_for(self.ports, organization_id)
        self._cache[organization_id] = (now + SETTINGS_TTL_SECONDS, settings)
        return settings

    def forget(self, organization_id: str) -> None:
        self._cache.pop(organization_id, None)

    def service(self) -> int:
        """The service key's figure: its own, whatever its organization's tier."""
        return self.service_per_minute

    async def api(self, organization_id: str) -> int:
        return (await self._settings(organization_id)).api_limit(self.standard_per_minute)

    async def worker(self, organization_id: str) -> int:
        return (await self._settings(organization_id)).worker_limit(self.worker_per_minute)
