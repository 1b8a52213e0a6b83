"""Context repository contract on every store: contexts set on owners (scoped, gone with their owner), the one read
of the contexts that apply to a new execution, and the context stored with an execution in its write."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from controlplane_domain.contexts.entity import (
    Context,
    Knowledge,
    OwnedContext,
    OwnerType,
    ResolvedContext,
    Source,
)
from controlplane_domain.executions.entity import ExecutionStatus, TargetType
from controlplane_domain.projects.entity import MemberKind
from tests.contract.conftest import UowFactory
from tests.contract.test_execution_records import ENVIRONMENT, events, queue, stored
from tests.contract.test_hot_statements import execution
from tests.contract.test_projects import project
from tests.contract.test_repositories import T0, agent, team

CONTEXT = Context(
    instructions="Be brief. é",
    knowledge=(Knowledge("runbook", text="Restart it."), Knowledge("wiki", uri="https://wiki.example/ops")),
    variables={"REGION": "eu", "TIER": "gold"},
    storage_paths=("reports/", "shared/data.csv"),
)


def owned(owner_type: OwnerType, owner_id: str, org: str = "org-a", *, context: Context = CONTEXT) -> OwnedContext:
    return OwnedContext(organization_id=org, owner_type=owner_type, owner_id=owner_id, context=context,
                        created_at=T0, updated_at=T0)  # fmt: skip


async def seed(uow: UowFactory) -> None:
    """org-a: agent `a` in team `t`; project `early` holds the team (joined at T0), project `late` the agent (T0+5s)
    and `other` holds neither; the queue `q` of environment `env`. org-b: an agent and a project of its own."""
    async with uow() as work:
        await work.teams.add(team("t"))
        await work.agents.add(agent("a", team_id="org-a-team-t"))
        await work.agents.add(agent("b", org="org-b"))
        await work.environments.add(ENVIRONMENT)
        await work.queues.add(queue())
        for name, key in (("early", "EARLY"), ("late", "LATE"), ("other", "OTHER")):
            await work.projects.add(project(name, key))
        await work.projects.add(project("theirs", "THEIRS", "org-b"))
        await work.projects.set_member("org-a", "org-a-project-early", MemberKind.TEAM, "org-a-team-t", True, T0)
        late = T0 + timedelta(seconds=5)
        await work.projects.set_member("org-a", "org-a-project-late", MemberKind.AGENT, "org-a-a", True, late)
        await work.projects.set_member("org-b", "org-b-project-theirs", MemberKind.AGENT, "org-b-b", True, T0)
        await work.commit()


ALL_OWNERS = [
    (OwnerType.AGENT, "org-a-a"), (OwnerType.TEAM, "org-a-team-t"), (OwnerType.ENVIRONMENT, "env"),
    (OwnerType.PROJECT, "org-a-project-early"), (OwnerType.PROJECT, "org-a-project-late"),
    (OwnerType.PROJECT, "org-a-project-other"),
]  # fmt: skip


async def test_contexts_round_trip_and_are_scoped(uow: UowFactory) -> None:
    await seed(uow)
    async with uow() as work:
        for owner_type, owner_id in ALL_OWNERS:
            await work.contexts.put(owned(owner_type, owner_id))
        await work.commit()
    async with uow() as work:
        for owner_type, owner_id in ALL_OWNERS:
            assert await work.contexts.get("org-a", owner_type, owner_id) == owned(owner_type, owner_id)
        assert await work.contexts.get("org-b", OwnerType.AGENT, "org-a-a") is None
        assert await work.contexts.get("org-a", OwnerType.TEAM, "org-a-a") is None
        await work.contexts.delete("org-b", OwnerType.AGENT, "org-a-a")
        await work.commit()
    replaced = replace(owned(OwnerType.AGENT, "org-a-a", context=Context()), updated_at=T0 + timedelta(seconds=1))
    async with uow() as work:
        assert await work.contexts.get("org-a", OwnerType.AGENT, "org-a-a") == owned(OwnerType.AGENT, "org-a-a")
        await work.contexts.put(replaced)
        await work.contexts.delete("org-a", OwnerType.TEAM, "org-a-team-t")
        await work.contexts.delete("org-a", OwnerType.TEAM, "org-a-team-t")
        await work.commit()
    async with uow() as work:
        assert await work.contexts.get("org-a", OwnerType.AGENT, "org-a-a") == replaced
        assert await work.contexts.get("org-a", OwnerType.TEAM, "org-a-team-t") is None


async def test_a_context_goes_with_its_owner(uow: UowFactory) -> None:
    await seed(uow)
    async with uow() as work:
        for owner_type, owner_id in ALL_OWNERS:
            await work.contexts.put(owned(owner_type, owner_id))
        await work.commit()
    async with uow() as work:
        await work.agents.delete("org-a", "org-a-a")
        await work.projects.delete("org-a", "org-a-project-other")
        await work.commit()
    async with uow() as work:
        assert await work.contexts.get("org-a", OwnerType.AGENT, "org-a-a") is None
        assert await work.contexts.get("org-a", OwnerType.PROJECT, "org-a-project-other") is None
        assert await work.contexts.get("org-a", OwnerType.TEAM, "org-a-team-t") == owned(OwnerType.TEAM, "org-a-team-t")


def _found(layers: list) -> set[tuple[OwnerType, str, object]]:  # type: ignore[type-arg]
    return {(layer.owned.owner_type, layer.owned.owner_id, layer.joined) for layer in layers}


async def test_one_read_finds_every_context_that_applies(uow: UowFactory) -> None:
    await seed(uow)
    async with uow() as work:
        for owner_type, owner_id in ALL_OWNERS:
            await work.contexts.put(owned(owner_type, owner_id))
        await work.contexts.put(owned(OwnerType.AGENT, "org-b-b", "org-b"))
        await work.contexts.put(owned(OwnerType.PROJECT, "org-b-project-theirs", "org-b"))
        await work.commit()
    async with uow() as work:
        for_agent = await work.contexts.applicable("org-a", agent_id="org-a-a", team_id=None, queue_id="q")
        for_team = await work.contexts.applicable("org-a", agent_id=None, team_id="org-a-team-t", queue_id="q")
        elsewhere = await work.contexts.applicable("org-b", agent_id="org-a-a", team_id=None, queue_id="q")
        theirs = await work.contexts.applicable("org-b", agent_id="org-b-b", team_id=None, queue_id="nope")
    late = T0 + timedelta(seconds=5)
    assert _found(for_agent) == {
        (OwnerType.AGENT, "org-a-a", None), (OwnerType.TEAM, "org-a-team-t", None),
        (OwnerType.ENVIRONMENT, "env", None), (OwnerType.PROJECT, "org-a-project-early", T0),
        (OwnerType.PROJECT, "org-a-project-late", late),
    }  # fmt: skip
    assert all(layer.owned == owned(layer.owned.owner_type, layer.owned.owner_id) for layer in for_agent)
    assert _found(for_team) == {
        (OwnerType.TEAM, "org-a-team-t", None), (OwnerType.ENVIRONMENT, "env", None),
        (OwnerType.PROJECT, "org-a-project-early", T0),
    }  # fmt: skip
    assert elsewhere == []
    assert _found(theirs) == {(OwnerType.AGENT, "org-b-b", None), (OwnerType.PROJECT, "org-b-project-theirs", T0)}


RESOLVED = ResolvedContext(
    context=CONTEXT, sources=(Source(OwnerType.ENVIRONMENT, "env"), Source(OwnerType.AGENT, "a"))
)


async def test_an_execution_is_stored_with_its_context_in_its_write(uow: UowFactory) -> None:
    await seed(uow)
    new = replace(execution("e1", None, ExecutionStatus.QUEUED), agent_id="org-a-a", last_seq=1)
    plain = replace(new, id="e2")
    refused = replace(new, id="e3", worker_queue_id="nope")
    team_run = replace(new, id="e4", agent_id=None, team_id="org-a-team-t", target_type=TargetType.TEAM)
    async with uow() as work:
        queue_found, agent_found, added = await work.executions.add_if_found(new, events(new, 1), RESOLVED)
        assert (queue_found, agent_found) == (True, True)
        await work.commit()
    async with uow() as work:
        assert (await work.executions.add_if_found(plain, events(plain, 1)))[:2] == (True, True)
        await work.commit()
    async with uow() as work:
        assert (await work.executions.add_if_found(refused, events(refused, 1), RESOLVED))[:2] == (False, True)
        await work.commit()
    async with uow() as work:
        assert await work.executions.record(None, team_run, events(team_run, 1), context=RESOLVED)
        await work.commit()
    assert await stored(uow, "e1") == (added, events(new, 1))  # as added: with what it was run with
    async with uow() as work:
        assert await work.contexts.for_execution("org-a", "e1") == RESOLVED
        assert await work.contexts.for_execution("org-a", "e4") == RESOLVED
        assert await work.contexts.for_execution("org-a", "e2") is None
        assert await work.contexts.for_execution("org-a", "e3") is None
        assert await work.contexts.for_execution("org-b", "e1") is None
