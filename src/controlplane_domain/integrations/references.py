"""`integration_ids` and `custom_integration_ids` of an ExecutionEnvironment: checked when an agent or a team is
saved (they name integrations of the organization; 422 naming the field otherwise)."""

from __future__ import annotations

from collections.abc import Sequence

from controlplane_domain.config import ExecutionEnvironment
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.ports import UnitOfWork
from controlplane_domain.secrets.references import check_secret_references


def _missing(wanted: Sequence[str], found: set[str], field: str) -> None:
    missing = list(dict.fromkeys(item for item in wanted if item not in found))
    if missing:
        raise ValidationFailed(field, f"unknown id(s): {', '.join(missing)}")


async def check_integration_references(
    uow: UnitOfWork, organization_id: str, prefix: str, environment: ExecutionEnvironment | None
) -> None:
    """Every id in the environment's `integration_ids` names an integration of the organization, and every id in
    its `custom_integration_ids` a custom integration (disabled ones count: they are left out at lease time)."""
    if environment is None:
        return
    if environment.integration_ids:
        found = await uow.integrations.get_many(organization_id, environment.integration_ids)
        _missing(environment.integration_ids, {item.id for item in found}, f"{prefix}.integration_ids")
    if environment.custom_integration_ids:
        custom = await uow.custom_integrations.get_many(organization_id, environment.custom_integration_ids)
        _missing(environment.custom_integration_ids, {item.id for item in custom}, f"{prefix}.custom_integration_ids")


async def check_environment_references(
    uow: UnitOfWork, organization_id: str, environment: ExecutionEnvironment | None
) -> None:
    """The secrets and integrations an agent's or a team's `execution_environment` names exist (422 otherwise)."""
    await check_secret_references(uow, organization_id, "execution_environment", environment)
    await check_integration_references(uow, organization_id, "execution_environment", environment)
