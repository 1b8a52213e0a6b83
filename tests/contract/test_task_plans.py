"""Task plans on every store: the repository, a plan planned through a lease and a completion (its outcome written
in the completion's transaction) then run as a workflow run, the reaper's failure of its planning, and on Postgres
the completion waiting for the plan's row."""

# ruff: noqa: S608  (the holder's SQL names an id the test generated)

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.schemas import JsonSchemaValidator
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.executions import completion, lease_ends, leases
from controlplane_domain.executions.entity import ExecutionStatus, TargetType
from controlplane_domain.owners import OWNERS
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.task_plans import usecases
from controlplane_domain.task_plans.entity import PlanStatus, PlanStep, TaskPlan
from controlplane_domain.workflows import runs
from controlplane_domain.workflows.entity import RunStatus
from tests.contract.conftest import UowFactory, behind

ORG = "org-a"
T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def stored_plan(plan_id: str, second: int = 0, org: str = ORG) -> TaskPlan:
    at = T0 + timedelta(seconds=second)
    return TaskPlan(
        id=plan_id, organization_id=org, task="a task", worker_queue_id="q", agent_ids=("a1", "a2"),
        status=PlanStatus.PLANNING, execution_id=f"x-{plan_id}", created_at=at, updated_at=at,
    )  # fmt: skip


async def test_plans_round_trip_and_are_scoped(uow: UowFactory) -> None:
    first, second = stored_plan("p1"), replace(stored_plan("p2", 1), agent_ids=None)
    async with uow() as work:
        await work.task_plans.add(first)
        await work.task_plans.add(second)
        await work.task_plans.add(stored_plan("p3", 2, org="org-b"))
        await work.commit()
    ready = replace(
        first,
        status=PlanStatus.READY,
        summary="s",
        steps=(
            PlanStep(id="a", title="A", agent_id="a1", prompt="do {{input.task}}"),
            PlanStep(id="b", title="B", team_id="t1", prompt="{{steps.a.output}}", depends_on=("a",)),
        ),
        finished_at=T0,
        workflow_id="w",
        workflow_run_id="r",
    )
    async with uow() as work:
        assert await work.task_plans.get(ORG, "p1") == first
        assert await work.task_plans.get("org-b", "p1") is None
        assert await work.task_plans.by_execution(ORG, "x-p2") == second
        assert await work.task_plans.by_execution("org-b", "x-p2") is None
        locked = await work.task_plans.by_execution(ORG, "x-p1", for_update=True)
        assert locked == first
        await work.task_plans.update(ready)
        await work.commit()
    async with uow() as work:
        assert await work.task_plans.get(ORG, "p1") == ready
        page = PageRequest(limit=10)
        oldest, total = await work.task_plans.list_page(ORG, page, status=None)
        assert ([plan.id for plan in oldest], total) == (["p1", "p2"], 2)
        assert [p.id for p in (await work.task_plans.list_page(ORG, page, status=PlanStatus.PLANNING))[0]] == ["p2"]
        newest, total = await work.task_plans.newest_page(ORG, page, None)
        assert ([plan.id for plan in newest], total) == (["p2", "p1"], 2)
        only, total = await work.task_plans.newest_page(ORG, page, frozenset({PlanStatus.READY}))
        assert ([plan.id for plan in only], total) == (["p1"], 1)


def _ports(uow: UowFactory, clock: ManualClock | None = None, *, schemas: bool = True) -> Ports:
    return Ports(
        uow=uow, clock=clock or ManualClock(T0), ids=UuidGenerator(), max_attempts=2,
        schemas=JsonSchemaValidator() if schemas else None, owners=OWNERS,
    )  # fmt: skip


async def _setup(ports: Ports) -> tuple[str, str]:
    """An agent and a queue: (agent id, queue id)."""
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="writer", description="writes"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="env"))
    queue = await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))
    return agent.id, queue.queue.id


def _plan_json(agent_id: str) -> str:
    steps = [
        {"id": "one", "title": "One", "agent_id": agent_id, "prompt": "first: {{input.task}}"},
        {
            "id": "two",
            "title": "Two",
            "agent_id": agent_id,
            "prompt": "then {{steps.one.output}}",
            "depends_on": ["one"],
        },
    ]
    return json.dumps({"summary": "one then two", "steps": steps})


@pytest.mark.parametrize("schemas", [True, False], ids=["schema-validator", "no-schema-validator"])
async def test_a_plan_is_planned_then_run_on_every_store(uow: UowFactory, schemas: bool) -> None:
    ports = _ports(uow, schemas=schemas)
    agent_id, queue_id = await _setup(ports)
    plan = await usecases.create_plan(ports, ORG, usecases.CreatePlan(task="t", worker_queue_id=queue_id))
    lease = await leases.try_lease(ports, ORG, queue_id, "w1")
    assert lease is not None
    assert (lease.execution.id, lease.execution.target_type, lease.agent) == (plan.execution_id, TargetType.PLAN, None)
    planning = lease.resolved.planning
    assert planning is not None
    assert (planning.plan_id, planning.task, [a.id for a in planning.agents], planning.teams) == (
        plan.id, "t", [agent_id], ()
    )  # fmt: skip
    done = completion.CompleteCommand(
        worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response=_plan_json(agent_id)
    )
    await completion.complete(ports, ORG, plan.execution_id, done)
    ready = await usecases.get_plan(ports, ORG, plan.id)
    assert (ready.status, ready.summary, [step.id for step in ready.steps]) == (PlanStatus.READY, "one then two",
                                                                                ["one", "two"])  # fmt: skip
    run = await usecases.run_plan(ports, ORG, plan.id)
    prompts = []
    while (step := await leases.try_lease(ports, ORG, queue_id, "w1")) is not None:
        prompts.append(step.execution.prompt)
        answer = completion.CompleteCommand(
            worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response=step.execution.prompt.upper()
        )
        await completion.complete(ports, ORG, step.execution.id, answer)
    assert prompts == ["first: t", "then FIRST: T"]
    assert (await runs.get_run(ports, ORG, run.id)).status is RunStatus.SUCCEEDED
    started = await usecases.get_plan(ports, ORG, plan.id)
    assert (started.status, started.workflow_run_id) == (PlanStatus.STARTED, run.id)


async def test_the_reapers_failure_of_the_last_attempt_fails_the_plan(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    _, queue_id = await _setup(ports)
    plan = await usecases.create_plan(ports, ORG, usecases.CreatePlan(task="t", worker_queue_id=queue_id))
    for _ in range(ports.max_attempts):  # each lease expires; the last one fails the execution
        assert await leases.try_lease(ports, ORG, queue_id, "w1") is not None
        clock.advance(ports.lease_timeout_seconds + 1)
        assert await lease_ends.reap_expired_leases(ports) == 1
    failed = await usecases.get_plan(ports, ORG, plan.id)
    assert failed.status is PlanStatus.FAILED
    assert failed.error is not None
    assert failed.error.startswith("its planning execution failed: no worker finished it: the lease expired")


async def test_a_completion_waits_for_its_plans_row(postgres_engine: AsyncEngine, postgres_url: str) -> None:
    ports = _ports(lambda: SqlUnitOfWork(postgres_engine))
    agent_id, queue_id = await _setup(ports)
    plan = await usecases.create_plan(ports, ORG, usecases.CreatePlan(task="t", worker_queue_id=queue_id))
    assert await leases.try_lease(ports, ORG, queue_id, "w1") is not None
    done = completion.CompleteCommand(
        worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response=_plan_json(agent_id)
    )
    # the plan's row held by another transaction: the completion waits for it, then decides the plan
    await behind(
        postgres_url,
        [f"SELECT 1 FROM task_plans WHERE id = '{plan.id}' FOR UPDATE"],
        completion.complete(ports, ORG, plan.execution_id, done),
    )
    assert (await usecases.get_plan(ports, ORG, plan.id)).status is PlanStatus.READY
