"""Repository contract: organization scoping, uniqueness, ordering, transactions, round trips."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from controlplane_domain.agents.entity import Agent, AgentStatus
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.config import (
    ExecutionEnvironment,
    LLMConfig,
    MCPServerConfig,
    ReasoningConfig,
    SessionConfig,
    TeamSettings,
)
from controlplane_domain.errors import Conflict
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest
from controlplane_domain.principal import Role
from controlplane_domain.teams.entity import Team, TeamStatus
from controlplane_domain.workers.entity import Worker, WorkerStatus
from tests.contract.conftest import UowFactory

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def agent(name: str, org: str = "org-a", *, at: int = 0, team_id: str | None = None, **fields: object) -> Agent:
    values: dict[str, object] = {
        "id": f"{org}-{name}",
        "organization_id": org,
        "name": name,
        "description": None,
        "status": AgentStatus.ACTIVE,
        "runtime": "default",
        "model_id": None,
        "system_prompt": None,
        "team_id": team_id,
        "created_at": T0 + timedelta(seconds=at),
        "updated_at": T0 + timedelta(seconds=at),
        **fields,
    }
    return Agent(**values)  # type: ignore[arg-type]


def team(name: str, org: str = "org-a", *, at: int = 0, settings: TeamSettings | None = None) -> Team:
    return Team(
        id=f"{org}-team-{name}",
        organization_id=org,
        name=name,
        description="d",
        status=TeamStatus.ACTIVE,
        runtime="default",
        settings=settings or TeamSettings(),
        skill_ids=None,
        execution_environment=None,
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


async def test_agents_round_trip_and_are_scoped(uow: UowFactory) -> None:
    environment = ExecutionEnvironment(
        working_dir="/w",
        env_vars={"A": "1"},
        secrets=["s"],
        mcp_servers={"fs": MCPServerConfig(command="mcp", args=["-v"]), "web": MCPServerConfig(url="https://x")},
    )
    stored = agent(
        "a", capabilities=["x"], skill_ids=["k"], execution_environment=environment, configuration={"deep": {"n": [1]}}
    )
    async with uow() as work:
        await work.agents.add(stored)
        await work.commit()
    async with uow() as work:
        assert await work.agents.get("org-a", stored.id) == stored
        assert await work.agents.get("org-b", stored.id) is None
        assert await work.agents.get_many("org-b", [stored.id]) == []
        await work.agents.delete("org-b", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.agents.get("org-a", stored.id) == stored


async def test_names_are_unique_per_organization(uow: UowFactory) -> None:
    async with uow() as work:
        await work.agents.add(agent("same"))
        await work.agents.add(agent("same", "org-b"))
        await work.commit()
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.agents.add(replace(agent("same"), id="another-id"))
    async with uow() as work:
        await work.agents.add(agent("other"))
        await work.commit()
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.agents.update(replace(agent("other"), name="same"))
    async with uow() as work:
        assert (await work.agents.get("org-a", "org-a-other")).name == "other"  # type: ignore[union-attr]


async def test_an_agent_added_with_the_commit_is_stored_and_its_name_still_unique(uow: UowFactory) -> None:
    async with uow() as work:
        await work.commit_with(lambda: work.agents.add(agent("solo", team_id=None)))
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.commit_with(lambda: work.agents.add(replace(agent("solo"), id="another-id")))
    async with uow() as work:
        stored = await work.agents.get("org-a", "org-a-solo")
        duplicate = await work.agents.get("org-a", "another-id")
    assert [stored == agent("solo"), duplicate] == [True, None]


async def test_commit_with_commits_what_came_before_and_a_later_write_is_a_new_transaction(uow: UowFactory) -> None:
    """`commit_with`'s write is committed with what the unit of work wrote before it; a write after it is a
    transaction of its own (left without commit: rolled back); a `commit_with` whose write fails commits nothing.
    Alike on every store, whether or not the store sends the write alone."""
    async with uow() as work:
        await work.agents.add(agent("before"))
        await work.commit_with(lambda: work.agents.add(agent("with")))
        await work.agents.add(agent("after"))  # not committed
    async with uow() as work:
        await work.commit_with(lambda: work.agents.add(agent("alone")))
        await work.agents.add(agent("later"))
        await work.commit()
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.agents.add(agent("lost"))
            await work.commit_with(lambda: work.agents.add(replace(agent("with"), id="dup")))
    async with uow() as work:
        names = [a.name for a in (await work.agents.list_page("org-a", PageRequest()))[0]]
    assert sorted(names) == ["alone", "before", "later", "with"]


async def test_leaving_without_commit_rolls_back(uow: UowFactory) -> None:
    async with uow() as work:
        await work.agents.add(agent("ghost"))
    with pytest.raises(RuntimeError):
        async with uow() as work:
            await work.agents.add(agent("boom"))
            raise RuntimeError("boom")
    async with uow() as work:
        assert (await work.agents.list_page("org-a", PageRequest()))[1] == 0


async def test_list_is_ordered_paged_and_counted(uow: UowFactory) -> None:
    async with uow() as work:
        for index, at in enumerate([5, 1, 3, 3, 0]):
            await work.agents.add(agent(f"n{index}", at=at))
        await work.agents.add(agent("foreign", "org-b"))
        await work.commit()
    async with uow() as work:
        everything, total = await work.agents.list_page("org-a", PageRequest(limit=200))
        first, _ = await work.agents.list_page("org-a", PageRequest(limit=2))
        rest, _ = await work.agents.list_page("org-a", PageRequest(limit=10, offset=2))
    assert total == 5
    assert [a.id for a in everything] == [a.id for a in sorted(everything, key=lambda a: (a.created_at, a.id))]
    assert [a.name for a in everything] == ["n4", "n1", "n2", "n3", "n0"]
    assert first + rest == everything


async def test_membership_queries(uow: UowFactory) -> None:
    async with uow() as work:
        await work.teams.add(team("t1"))
        await work.teams.add(team("t2"))
        await work.agents.add(agent("a", at=2))
        await work.agents.add(agent("b", at=1))
        await work.agents.add(agent("c", at=3))
        await work.agents.add(agent("x", "org-b"))
        await work.agents.set_team("org-a", ["org-a-a", "org-a-b"], "org-a-team-t1", T0 + timedelta(hours=1))
        await work.agents.set_team("org-a", ["org-a-c"], "org-a-team-t2", T0)
        await work.agents.set_team("org-a", ["org-b-x"], "org-a-team-t1", T0)
        await work.commit()
    async with uow() as work:
        members = await work.agents.list_by_teams("org-a", ["org-a-team-t1"])
        both = await work.agents.list_by_teams("org-a", ["org-a-team-t1", "org-a-team-t2"])
        foreign = await work.agents.get("org-b", "org-b-x")
    assert [m.name for m in members] == ["b", "a"]
    assert members[0].updated_at == T0 + timedelta(hours=1)
    assert [m.name for m in both] == ["b", "a", "c"]
    assert foreign is not None
    assert foreign.team_id is None


async def test_set_member_moves_an_agent_once_and_only_within_its_organization(uow: UowFactory) -> None:
    later, latest = T0 + timedelta(hours=1), T0 + timedelta(hours=2)
    async with uow() as work:
        await work.teams.add(team("t1"))
        await work.teams.add(team("t2"))
        await work.teams.add(team("t9", "org-b"))
        await work.agents.add(agent("a", team_id="org-a-team-t2"))
        await work.agents.add(agent("x", "org-b"))
        await work.commit()

    async def add(
        team_id: str, agent_id: str, now: datetime, member: bool = True
    ) -> tuple[str | None, datetime | None, bool]:
        async with uow() as work:  # a unit of work each: on Postgres the change is its own transaction
            found_team, found_agent = await work.teams.set_member("org-a", team_id, agent_id, member, now)
            await work.commit()
        return (found_team.id, found_team.updated_at, found_agent) if found_team else (None, None, found_agent)

    assert await add("org-a-team-t1", "org-a-a", later) == ("org-a-team-t1", later, True)  # moved, team bumped
    assert await add("org-a-team-t1", "org-a-a", latest) == ("org-a-team-t1", later, True)  # a member: no write
    assert await add("org-a-team-none", "org-a-a", latest) == (None, None, True)
    assert await add("org-a-team-t2", "org-a-none", latest) == ("org-a-team-t2", T0, False)
    assert await add("org-b-team-t9", "org-a-a", latest) == (None, None, True)  # another organization's team
    assert await add("org-a-team-t2", "org-b-x", latest) == ("org-a-team-t2", T0, False)  # another's agent
    assert await add("org-a-team-t2", "org-a-a", latest, member=False) == ("org-a-team-t2", T0, True)  # not in it
    async with uow() as work:
        a = await work.agents.get("org-a", "org-a-a")
        x = await work.agents.get("org-b", "org-b-x")
        t1 = await work.teams.get("org-a", "org-a-team-t1")
        t2 = await work.teams.get("org-a", "org-a-team-t2")
        members = await work.agents.list_by_teams("org-a", ["org-a-team-t1"])
    assert [(a.team_id, a.updated_at) if a else None, x.team_id if x else "missing"] == [("org-a-team-t1", later), None]
    assert [t.updated_at if t else None for t in (t1, t2)] == [later, T0]
    assert [m.id for m in members] == ["org-a-a"]


async def test_teams_round_trip_nested_settings(uow: UowFactory) -> None:
    settings = TeamSettings(
        instructions=["one", "two"],
        reasoning=ReasoningConfig(enabled=True, min_steps=2, max_steps=5),
        llm=LLMConfig(model="m", temperature=0.7, stop=["END"], top_k=0),
        session=SessionConfig(user_id="u", persist=False),
        tools=[{"name": "search", "config": {"depth": 2}}],
        knowledge_base={"vector": "pg"},
        markdown=False,
        metadata={"k": "v"},
    )
    stored = team("t", settings=settings)
    async with uow() as work:
        await work.teams.add(stored)
        await work.commit()
    async with uow() as work:
        assert await work.teams.get("org-a", stored.id) == stored
        assert await work.teams.get("org-b", stored.id) is None
        renamed = replace(stored, name="t2", status=TeamStatus.ARCHIVED)
        await work.teams.update(renamed)
        await work.commit()
    async with uow() as work:
        assert await work.teams.get("org-a", stored.id) == renamed
        await work.teams.delete("org-a", stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.teams.get("org-a", stored.id) is None
        assert await work.teams.list_page("org-a", PageRequest()) == ([], 0)


async def test_team_name_conflict(uow: UowFactory) -> None:
    async with uow() as work:
        await work.teams.add(team("t"))
        await work.commit()
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.teams.add(replace(team("t"), id="other"))


def worker(worker_id: str, org: str = "org-a", *, at: int = 0, seen: int = 0) -> Worker:
    return Worker(
        worker_id=worker_id,
        organization_id=org,
        environment_name="prod",
        status=WorkerStatus.ACTIVE,
        tasks_processed=seen,
        current_task_id=None,
        worker_metadata={"v": seen},
        heartbeat_interval_seconds=30,
        registered_at=T0 + timedelta(seconds=at),
        last_heartbeat_at=T0 + timedelta(seconds=at + seen),
    )


async def test_workers_upsert_and_scope(uow: UowFactory) -> None:
    async with uow() as work:
        await work.workers.save(worker("w2", at=2))
        await work.workers.save(worker("w1", at=1))
        await work.workers.save(worker("w1", "org-b", at=0))
        await work.commit()
    async with uow() as work:
        await work.workers.save(replace(worker("w1", at=1, seen=9), status=WorkerStatus.BUSY))
        await work.commit()
    async with uow() as work:
        mine, total = await work.workers.list_page("org-a", PageRequest())
        theirs = await work.workers.get("org-b", "w1")
    assert total == 2
    assert [w.worker_id for w in mine] == ["w1", "w2"]
    assert (mine[0].status, mine[0].tasks_processed, mine[0].worker_metadata) == (WorkerStatus.BUSY, 9, {"v": 9})
    assert theirs == worker("w1", "org-b", at=0)


async def test_a_worker_registers_once(uow: UowFactory) -> None:
    async with uow() as work:
        assert await work.workers.register(worker("w1", at=1)) is True
        assert await work.workers.register(worker("w1", at=5, seen=3)) is False, "the id is taken"
        assert await work.workers.register(worker("w1", "org-b", at=2)) is True, "ids are per organization"
        await work.commit()
    async with uow() as work:
        assert await work.workers.get("org-a", "w1") == worker("w1", at=1), "the second registration left it alone"


async def test_worker_reports_are_written_together_and_never_over_a_later_heartbeat(uow: UowFactory) -> None:
    async with uow() as work:
        await work.workers.save(worker("w1", at=1, seen=5))  # another process wrote a later heartbeat
        await work.workers.save(worker("w2", at=2))
        await work.commit()
    reports = [worker("w1", at=0, seen=3), worker("w2", at=0, seen=4), worker("w3", at=3, seen=1)]
    async with uow() as work:
        await work.workers.save_reports(reports)
        await work.commit()
    async with uow() as work:
        stored = {w.worker_id: w for w in (await work.workers.list_page("org-a", PageRequest()))[0]}
    assert stored["w1"] == worker("w1", at=1, seen=5), "the later heartbeat stands"
    assert stored["w2"].tasks_processed == 4, "a later report replaces the stored one"
    assert stored["w2"].registered_at == T0 + timedelta(seconds=2), "registration time is kept"
    assert stored["w3"] == worker("w3", at=3, seen=1), "an unknown worker is inserted"


def model(value: str, *, enabled: bool = True, at: int = 0, org: str = "org-a") -> LlmModel:
    return LlmModel(
        id=f"{org}-{value}",
        organization_id=org,
        value=value,
        label=value.upper(),
        provider="p",
        description=None,
        enabled=enabled,
        compatible_runtimes=["default"],
        created_at=T0 + timedelta(seconds=at),
        updated_at=T0 + timedelta(seconds=at),
    )


async def test_models_filter_enabled_and_conflict_on_value(uow: UowFactory) -> None:
    async with uow() as work:
        await work.models.add(model("on", at=1))
        await work.models.add(model("off", enabled=False, at=2))
        await work.models.add(model("on", org="org-b"))
        await work.commit()
    async with uow() as work:
        enabled, total = await work.models.list_page("org-a", PageRequest(), enabled_only=True)
        everything, everything_total = await work.models.list_page("org-a", PageRequest())
    assert ([m.value for m in enabled], total) == (["on"], 1)
    assert ([m.value for m in everything], everything_total) == (["on", "off"], 2)
    with pytest.raises(Conflict):
        async with uow() as work:
            await work.models.add(replace(model("on"), id="dup"))


async def test_set_member_takes_an_agent_out_of_its_team_only(uow: UowFactory) -> None:
    later = T0 + timedelta(hours=1)
    async with uow() as work:
        await work.teams.add(team("t1"))
        await work.agents.add(agent("a", team_id="org-a-team-t1"))
        await work.commit()
    async with uow() as work:
        out, found = await work.teams.set_member("org-a", "org-a-team-t1", "org-a-a", False, later)
        await work.commit()
    async with uow() as work:
        a = await work.agents.get("org-a", "org-a-a")
        members = await work.agents.list_by_teams("org-a", ["org-a-team-t1"])
    assert [out.updated_at if out else None, found] == [later, True]
    assert [(a.team_id, a.updated_at) if a else None, members] == [(None, later), []]


async def test_a_workers_queue_changes_only_by_a_move(uow: UowFactory) -> None:
    """A heartbeat's report carries the queue as read before it, maybe before a concurrent lease moved the worker:
    saving it keeps the stored queue, which only `move_to_queue` (a lease) changes."""
    registered = replace(worker("w"), queue_id="q1")
    async with uow() as work:
        assert await work.workers.register(registered)
        await work.commit()
    async with uow() as work:
        await work.workers.move_to_queue("org-a", "w", "q2")  # a lease on q2
        await work.commit()
    stale = replace(registered, tasks_processed=5, last_heartbeat_at=registered.last_heartbeat_at + timedelta(1))
    async with uow() as work:
        await work.workers.save_reports([stale])  # a report read before the move
        await work.commit()
    async with uow() as work:
        stored = await work.workers.get("org-a", "w")
    assert stored is not None
    assert (stored.queue_id, stored.tasks_processed) == ("q2", 5)
    async with uow() as work:
        await work.workers.save(replace(stale, tasks_processed=6))  # written through (a lease renewal)
        await work.commit()
    async with uow() as work:
        stored = await work.workers.get("org-a", "w")
    assert stored is not None
    assert (stored.queue_id, stored.tasks_processed) == ("q2", 6)


async def test_api_keys_keep_a_worker_keys_bindings(uow: UowFactory) -> None:
    """A worker key's environments and queues round-trip in order; every other key has none (NULL in SQL)."""
    common = {"organization_id": "org-a", "secret_hash": "h", "created_by": "admin", "created_at": T0,
              "expires_at": None}  # fmt: skip
    bound = ApiKey(id="k1", name="w", role=Role.WORKER, environment_ids=("e2", "e1"), queue_ids=("q1",), **common)
    unbound = ApiKey(id="k2", name="w2", role=Role.WORKER, **common)
    member = ApiKey(id="k3", name="m", role=Role.MEMBER, **common)
    async with uow() as work:
        for key in (bound, unbound, member):
            await work.api_keys.add(key)
        await work.commit()
    async with uow() as work:
        assert await work.api_keys.get("org-a", "k1") == bound
        assert await work.api_keys.find_for_authentication("k2") == unbound
        assert await work.api_keys.get("org-a", "k3") == member
        assert await work.api_keys.get("org-b", "k1") is None
