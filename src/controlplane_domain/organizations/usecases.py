"""Organization settings: readable by the organization's admins, set by an operator."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane_domain.audit.usecases import record
from controlplane_domain.errors import Forbidden, NotFound, ValidationFailed
from controlplane_domain.organizations.entity import OrganizationSettings, Tier
from controlplane_domain.ports import Ports
from controlplane_domain.principal import Principal, Role
from controlplane_domain.retry import retry_transient

MAX_RATE_PER_MINUTE = 1_000_000
MAX_QUOTA_BYTES = 2**63 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class SetOrganizationSettings:
    tier: Tier
    rate_limit_per_minute: int | None = None
    worker_rate_limit_per_minute: int | None = None
    storage_quota_bytes: int | None = None


def _check_visible(principal: Principal, organization_id: str) -> None:
    if principal.operator:
        return
    if principal.organization_id != organization_id:
        raise NotFound("organization", organization_id)
    if not principal.can(Role.ADMIN):
        raise Forbidden("organization settings need the admin role")


async def settings_for(ports: Ports, organization_id: str) -> OrganizationSettings:
    """The stored settings, or the standard tier."""
    async with ports.read() as uow:
        stored = await uow.organizations.get_settings(organization_id)
    return stored or OrganizationSettings(organization_id=organization_id)


async def get_organization_settings(ports: Ports, principal: Principal, organization_id: str) -> OrganizationSettings:
    _check_visible(principal, organization_id)
    return await settings_for(ports, organization_id)


@retry_transient
async def set_organization_settings(
    ports: Ports, principal: Principal, organization_id: str, command: SetOrganizationSettings
) -> OrganizationSettings:
    """Only an operator (the SERVICE_API_KEY holder) sets the tier and its figures."""
    _check_visible(principal, organization_id)
    if not principal.operator:
        raise Forbidden("only an operator may change organization settings")
    for field, value in (
        ("rate_limit_per_minute", command.rate_limit_per_minute),
        ("worker_rate_limit_per_minute", command.worker_rate_limit_per_minute),
    ):
        if value is not None and not 1 <= value <= MAX_RATE_PER_MINUTE:
            raise ValidationFailed(field, f"must be between 1 and {MAX_RATE_PER_MINUTE}")
    if command.storage_quota_bytes is not None and not 0 <= command.storage_quota_bytes <= MAX_QUOTA_BYTES:
        raise ValidationFailed("storage_quota_bytes", f"must be between 0 and {MAX_QUOTA_BYTES}")
    if command.tier is Tier.ENTERPRISE and command.rate_limit_per_minute is None:
        raise ValidationFailed("rate_limit_per_minute", "the enterprise tier needs its own figure")
    settings = OrganizationSettings(
        organization_id=organization_id,
        tier=command.tier,
        rate_limit_per_minute=command.rate_limit_per_minute,
        worker_rate_limit_per_minute=command.worker_rate_limit_per_minute,
        storage_quota_bytes=command.storage_quota_bytes,
        updated_at=ports.clock.now(),
    )
    async with ports.uow() as uow:
        before = await uow.organizations.get_settings(organization_id) or OrganizationSettings(
            organization_id=organization_id
        )
        await uow.organizations.save_settings(settings)
        changed = sorted(name for name in _SETTINGS if getattr(before, name) != getattr(settings, name))
        await record(
            uow,
            organization_id=organization_id,
            action="organization.update",
            resource_type="organization",
            resource_id=organization_id,
            details={"changed": changed},
        )
        await uow.commit()
    return settings


_SETTINGS = ("tier", "rate_limit_per_minute", "worker_rate_limit_per_minute")
