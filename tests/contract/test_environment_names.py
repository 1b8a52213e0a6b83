"""An environment found by its name, in its organization only (a bound worker key's heartbeat names its
environment: workers/bindings.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from controlplane_domain.environments.entity import Environment, EnvironmentStatus
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
PROD = Environment(id="env-prod", organization_id="org-a", name="prod", description=None,
                   status=EnvironmentStatus.ACTIVE, variables={}, metadata={}, created_at=T0,
                   updated_at=T0)  # fmt: skip


async def test_an_environment_is_found_by_its_name_in_its_organization(uow: UowFactory) -> None:
    async with uow() as work:
        await work.environments.add(PROD)
        await work.environments.add(replace(PROD, id="env-staging", name="staging"))
        await work.environments.add(replace(PROD, id="env-b", organization_id="org-b", name="theirs"))
        await work.commit()
    async with uow() as work:
        assert await work.environments.get_by_name("org-a", "prod") == PROD
        assert (await work.environments.get_by_name("org-a", "staging") or PROD).id == "env-staging"
        assert await work.environments.get_by_name("org-a", "theirs") is None
        assert await work.environments.get_by_name("org-b", "prod") is None
        assert await work.environments.get_by_name("org-a", "PROD") is None
