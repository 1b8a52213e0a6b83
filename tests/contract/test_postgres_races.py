"""Postgres: a change that waited for a concurrent one answers as if it came after it, and loses nothing.

Each test holds a real concurrent change open on another connection (`_behind`), starts the use case behind
it, and commits the holder once the use case waits for a lock."""

# ruff: noqa: S608  (the holders' SQL names ids the tests generated)

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents import usecases as agents
from controlplane_domain.config import TeamSettings
from controlplane_domain.environments import usecases as environments
from controlplane_domain.errors import Conflict, NotFound
from controlplane_domain.llm_models import usecases as models
from controlplane_domain.ports import Ports
from controlplane_domain.references import InUse
from controlplane_domain.teams import usecases as teams
from tests.contract.conftest import behind

ORG = "org-a"


def ports_on(engine: AsyncEngine) -> Ports:
    return Ports(uow=lambda: SqlUnitOfWork(engine), clock=SystemClock(), ids=UuidGenerator())


async def test_an_edit_that_waited_for_a_delete_is_not_found(postgres_engine: AsyncEngine, postgres_url: str) -> None:
    ports = ports_on(postgres_engine)
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="a"))
    team = await teams.create_team(ports, ORG, teams.CreateTeam(name="t"))
    model = await models.create_model(ports, ORG, models.CreateModel(value="m", label="M", provider="p"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    edits = [
        ("agents", agent.id, agents.update_agent(ports, ORG, agent.id, agents.UpdateAgent(description="d"))),
        ("teams", team.team.id, teams.update_team(ports, ORG, team.team.id, teams.UpdateTeam(description="d"))),
        ("llm_models", model.id, models.update_model(ports, ORG, model.id, models.UpdateModel(label="L"))),
        ("environments", environment.id, environments.update_environment(
            ports, ORG, environment.id, environments.UpdateEnvironment(description="d"))),
    ]  # fmt: skip
    for table, object_id, edit in edits:
        with pytest.raises(NotFound):
            await behind(postgres_url, [f"DELETE FROM {table} WHERE id = '{object_id}'"], edit)


async def test_a_delete_that_waited_for_a_delete_is_not_found(postgres_engine: AsyncEngine, postgres_url: str) -> None:
    ports = ports_on(postgres_engine)
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="a"))
    with pytest.raises(NotFound):
        await behind(postgres_url, [f"DELETE FROM agents WHERE id = '{agent.id}'"],
                      agents.delete_agent(ports, ORG, agent.id))  # fmt: skip


async def test_two_edits_of_a_teams_configuration_both_stay(postgres_engine: AsyncEngine, postgres_url: str) -> None:
    ports = ports_on(postgres_engine)
    team = (await teams.create_team(ports, ORG, teams.CreateTeam(name="t"))).team
    assert team.settings == TeamSettings()
    debug = f"UPDATE teams SET configuration = configuration || '{{\"debug_mode\": true}}' WHERE id = '{team.id}'"
    monitor = teams.update_team(ports, ORG, team.id, teams.UpdateTeam(settings_changes={"monitoring": True}))
    await behind(postgres_url, [debug], monitor)
    settings = (await teams.get_team(ports, ORG, team.id)).team.settings
    assert (settings.debug_mode, settings.monitoring) == (True, True)


@pytest.mark.parametrize("change", ["replace members", "delete team"])
async def test_a_team_change_that_waited_for_a_move_elsewhere_does_not_undo_it(
    postgres_engine: AsyncEngine, postgres_url: str, change: str
) -> None:
    ports = ports_on(postgres_engine)
    a = (await teams.create_team(ports, ORG, teams.CreateTeam(name="a"))).team
    b = (await teams.create_team(ports, ORG, teams.CreateTeam(name="b"))).team
    x = await agents.create_agent(ports, ORG, agents.CreateAgent(name="x", team_id=a.id))
    move_to_b = [  # as a membership change locks: the team it joins, then the agent
        f"UPDATE teams SET updated_at = now() WHERE id = '{b.id}'",
        f"UPDATE agents SET team_id = '{b.id}' WHERE id = '{x.id}'",
    ]
    if change == "replace members":
        await behind(postgres_url, move_to_b, teams.update_team(ports, ORG, a.id, teams.UpdateTeam(member_ids=[])))
    else:
        await behind(postgres_url, move_to_b, teams.delete_team(ports, ORG, a.id, force=True))
    assert (await agents.get_agent(ports, ORG, x.id)).team_id == b.id


async def test_a_queue_delete_waits_for_an_execution_being_written_into_it(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    ports = ports_on(postgres_engine)
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    queue = (await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))).queue
    being_written = [  # an execute in flight: its insert is not committed yet
        "INSERT INTO executions (id, organization_id, target_type, worker_queue_id, prompt, status, usage, attempt,"
        " max_attempts, cancel_requested, last_seq, created_at, updated_at, queued_at) VALUES"
        f" ('e-1', '{ORG}', 'agent', '{queue.id}', 'p', 'queued', '{{}}', 0, 3, false, 0, now(), now(), now())"
    ]
    with pytest.raises(Conflict):
        await behind(postgres_url, being_written, environments.delete_queue(ports, ORG, queue.id))
    assert (await environments.get_queue(ports, ORG, queue.id)).queue.id == queue.id


async def test_an_environment_delete_that_waited_for_a_queue_being_created_is_a_conflict(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    ports = ports_on(postgres_engine)
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    being_created = [
        "INSERT INTO worker_queues (id, organization_id, environment_id, name, status, heartbeat_interval_seconds,"
        f" created_at, updated_at) VALUES ('q-1', '{ORG}', '{environment.id}', 'q', 'active', 30, now(), now())"
    ]
    with pytest.raises(InUse) as raised:
        await behind(postgres_url, being_created, environments.delete_environment(ports, ORG, environment.id))
    assert raised.value.details["referrers"] == [{"type": "worker_queue", "id": "q-1"}]
