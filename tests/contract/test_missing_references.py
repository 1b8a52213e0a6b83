"""A write that names a row deleted after its use case checked it (a race the checks cannot close) answers as the
check would have: never as a name conflict. Only the SQL stores have foreign keys to trip."""

from __future__ import annotations

import pytest

from controlplane_domain.errors import NotFound, ValidationFailed
from tests.contract.conftest import UowFactory
from tests.contract.test_execution_records import queue
from tests.contract.test_repositories import agent

sql_only = pytest.mark.parametrize("uow", ["sqlite", "postgres"], indirect=True)


@sql_only
@pytest.mark.parametrize("committing", [False, True])
async def test_an_agent_in_a_team_that_is_gone_is_a_validation_error_on_team_id(
    uow: UowFactory, committing: bool
) -> None:
    async with uow() as work:
        with pytest.raises(ValidationFailed) as raised:
            added = agent("a", team_id="org-a-team-gone")
            await (work.commit_with(lambda: work.agents.add(added)) if committing else work.agents.add(added))
    assert raised.value.field == "team_id"
    assert "org-a-team-gone" in raised.value.issue
    async with uow() as work:
        assert await work.agents.get("org-a", "org-a-a") is None


@sql_only
async def test_a_queue_of_an_environment_that_is_gone_is_not_found(uow: UowFactory) -> None:
    async with uow() as work:
        with pytest.raises(NotFound) as raised:
            await work.queues.add(queue())
    assert (raised.value.resource, raised.value.object_id) == ("environment", "env")
    async with uow() as work:
        assert await work.queues.get("org-a", "q") is None
