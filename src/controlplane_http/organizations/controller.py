"""Organization settings (read by admins, set by an operator)."""

from __future__ import annotations

from litestar import Controller, get, put
from litestar.di import NamedDependency
from litestar.params import FromPath, JSONBody
from litestar.types import Scope

from controlplane_domain.errors import NotFound
from controlplane_domain.organizations import usecases as organizations
from controlplane_domain.organizations.entity import OrganizationSettings as DomainSettings
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal
from controlplane_http.area import HttpArea
from controlplane_http.handlers import ADMIN, caller, errors
from controlplane_http.limits import LimitPolicy
from controlplane_wire.base import to_wire
from controlplane_wire.organizations import OrganizationSettings, OrganizationSettingsUpdate


def settings_out(settings: DomainSettings, policy: LimitPolicy) -> OrganizationSettings:
    return to_wire(
        settings,
        OrganizationSettings,
        effective_rate_limit_per_minute=settings.api_limit(policy.standard_per_minute),
        effective_worker_rate_limit_per_minute=settings.worker_limit(policy.worker_per_minute),
    )


class OrganizationController(Controller):
    path = "/api/v1/organizations/{organization_id:str}/settings"
    tags = ["authentication"]
    opt = ADMIN

    @get("/", operation_id="getOrganizationSettings", responses=errors(404))
    async def get_settings(
        self,
        organization_id: FromPath[str],
        scope: Scope,
        policy: NamedDependency[LimitPolicy],
    ) -> OrganizationSettings:
        """The organization's tier and rate limits (its admins, or an operator)."""
        ports, principal = caller(scope)
        settings = await organizations.get_organization_settings(ports, principal, organization_id)
        return settings_out(settings, policy)

    @put("/", operation_id="setOrganizationSettings", responses=errors(404, 415))
    async def set_settings(
        self,
        organization_id: FromPath[str],
        data: JSONBody[OrganizationSettingsUpdate],
        scope: Scope,
        policy: NamedDependency[LimitPolicy],
    ) -> OrganizationSettings:
        """Set the tier and its figures; only an operator (the SERVICE_API_KEY holder) may."""
        ports, principal = caller(scope)
        command = organizations.SetOrganizationSettings(
            tier=data.tier,
            rate_limit_per_minute=data.rate_limit_per_minute,
            worker_rate_limit_per_minute=data.worker_rate_limit_per_minute,
            storage_quota_bytes=data.storage_quota_bytes,
        )
        settings = await organizations.set_organization_settings(ports, principal, organization_id, command)
        policy.forget(organization_id)
        return settings_out(settings, policy)


async def organization_visible(ports: Ports, principal: Principal, organization_id: str) -> None:
    """An organization is visible to its own callers, and every one to an operator (the service key)."""
    if not principal.operator and organization_id != principal.organization_id:
        raise NotFound("organization", organization_id)


AREA = HttpArea((OrganizationController,), visible_to={"organization_id": organization_visible})
