"""Who names an object (`UnitOfWork.referrers`, controlplane_domain/references.py) on every store: the same
answer from the memory store's objects and from the SQL store's one query a referring table, where a JSON
column's text holds the id or the name without naming it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.config import ExecutionEnvironment, LLMConfig, MCPServerConfig, ReasoningConfig, TeamSettings
from controlplane_domain.principal import Role
from controlplane_domain.references import Kind, Referrer, Target
from controlplane_domain.task_plans.entity import PlanStatus, PlanStep
from tests.contract.conftest import UowFactory
from tests.contract.test_repositories import agent, team
from tests.contract.test_task_plans import ORG, stored_plan

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def _key(key_id: str, *, revoked: bool = False, org: str = "org-a", **bindings: tuple[str, ...]) -> ApiKey:
    return ApiKey(
        id=key_id, organization_id=org, name=key_id, role=Role.WORKER, secret_hash="h", created_by="t",
        created_at=T0, expires_at=None, revoked_at=T0 + timedelta(seconds=1) if revoked else None, **bindings,
    )  # fmt: skip


async def test_a_secret_is_named_by_its_references_not_by_text_that_holds_its_name(uow: UowFactory) -> None:
    agents = [
        agent("longer-name", execution_environment=ExecutionEnvironment(env_vars={"X": "{{secret:DB_PASSWORD}}"})),
        agent("header", execution_environment=ExecutionEnvironment(
            mcp_servers={"s": MCPServerConfig(url="https://x", headers={"H": "Bearer {{ secret:DB }}"})})),
        agent("listed", execution_environment=ExecutionEnvironment(secrets=["DB"])),
        agent("a-key-named-db", execution_environment=ExecutionEnvironment(env_vars={"DB": "DB"})),
        agent("elsewhere", "org-b", execution_environment=ExecutionEnvironment(secrets=["DB"])),
    ]  # fmt: skip
    async with uow() as work:
        for each in agents:
            await work.agents.add(each)
        await work.commit()
    async with uow() as work:
        found = await work.referrers.naming("org-a", Target(Kind.SECRET, "secret-id", "DB"), 10)
    assert found == [Referrer("agent", "org-a-header"), Referrer("agent", "org-a-listed")]


async def test_ids_and_models_match_whole_and_a_limit_keeps_the_first(uow: UowFactory) -> None:
    async with uow() as work:
        await work.agents.add(agent("one", skill_ids=["s-1"], model_id="gpt"))
        await work.agents.add(agent("ten", skill_ids=["s-10"], model_id="gpt-4"))
        await work.agents.add(agent("by-id", model_id="m-id"))
        await work.api_keys.add(_key("k-live", queue_ids=("q-1",)))
        await work.api_keys.add(_key("k-revoked", revoked=True, queue_ids=("q-1",)))
        await work.api_keys.add(_key("k-other", queue_ids=("q-10",), environment_ids=("q-1",)))
        await work.commit()
    async with uow() as work:
        assert await work.referrers.naming("org-a", Target(Kind.SKILL, "s-1"), 10) == [Referrer("agent", "org-a-one")]
        models = await work.referrers.naming("org-a", Target(Kind.MODEL, "m-id", "gpt"), 10)
        assert models == [Referrer("agent", "org-a-by-id"), Referrer("agent", "org-a-one")]
        assert await work.referrers.naming("org-a", Target(Kind.MODEL, "m-id", "gpt"), 1) == models[:1]
        queue = await work.referrers.naming("org-a", Target(Kind.WORKER_QUEUE, "q-1"), 10)
        assert queue == [Referrer("api_key", "k-live")]
        assert await work.referrers.naming("org-b", Target(Kind.WORKER_QUEUE, "q-1"), 10) == []


async def test_a_team_names_its_reasoning_agent_and_its_models(uow: UowFactory) -> None:
    reasoning = TeamSettings(reasoning=ReasoningConfig(agent_id="org-a-thinker", model="m-id"))
    async with uow() as work:
        await work.teams.add(team("reasons", settings=reasoning))
        await work.teams.add(team("speaks", settings=TeamSettings(llm=LLMConfig(model="gpt"))))
        await work.teams.add(team("speaks-longer", settings=TeamSettings(llm=LLMConfig(model="gpt-4"))))
        await work.teams.add(team("described", settings=TeamSettings(instructions="ask org-a-thinker, use gpt")))
        await work.commit()
    async with uow() as work:
        thinker = await work.referrers.naming("org-a", Target(Kind.AGENT, "org-a-thinker"), 10)
        models = await work.referrers.naming("org-a", Target(Kind.MODEL, "m-id", "gpt"), 10)
    assert thinker == [Referrer("team", "org-a-team-reasons")]
    assert models == [Referrer("team", "org-a-team-reasons"), Referrer("team", "org-a-team-speaks")]


async def test_a_task_plan_names_what_it_will_run_with_until_it_ends(uow: UowFactory) -> None:
    steps = (PlanStep(id="a", title="A", agent_id="a1", prompt="p"), PlanStep(id="b", title="B", team_id="t1",
             prompt="p", depends_on=("a",)))  # fmt: skip
    ready = replace(stored_plan("ready"), status=PlanStatus.READY, steps=steps, agent_ids=None)
    planning = replace(stored_plan("planning", 1), agent_ids=("a2",))
    ended = [replace(stored_plan(f"p-{status}", 2), status=status, steps=steps, agent_ids=("a2",))
             for status in (PlanStatus.FAILED, PlanStatus.CANCELLED, PlanStatus.STARTED)]  # fmt: skip
    async with uow() as work:
        for plan in (ready, planning, *ended):
            await work.task_plans.add(plan)
        await work.commit()
    async with uow() as work:
        named = {
            target: await work.referrers.naming(ORG, Target(kind, target), 10)
            for kind, target in ((Kind.AGENT, "a1"), (Kind.AGENT, "a2"), (Kind.TEAM, "t1"),
                                 (Kind.WORKER_QUEUE, ready.worker_queue_id))
        }  # fmt: skip
    assert named == {
        "a1": [Referrer("task_plan", "ready")],
        "a2": [Referrer("task_plan", "planning")],
        "t1": [Referrer("task_plan", "ready")],
        ready.worker_queue_id: [Referrer("task_plan", "planning"), Referrer("task_plan", "ready")],
    }
