"""Workflows on every store: the repositories, a run advanced by its executions' ends (worker, reaper), and on
Postgres two parallel steps ending at once start the step that waits for both exactly once."""

# ruff: noqa: S608  (the holder's SQL names an id the test generated)

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.errors import Conflict
from controlplane_domain.executions import completion, lease_ends, leases
from controlplane_domain.executions.entity import ExecutionStatus
from controlplane_domain.owners import OWNERS
from controlplane_domain.paging import PageRequest
from controlplane_domain.ports import Ports
from controlplane_domain.workflows import runs, usecases
from controlplane_domain.workflows.entity import (
    RunEvent,
    RunEventType,
    RunStatus,
    StepDefinition,
    StepRun,
    StepStatus,
    Workflow,
    WorkflowRun,
)
from tests.contract.conftest import UowFactory, behind

ORG = "org-a"
T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def workflow(name: str = "flow", org: str = ORG) -> Workflow:
    steps = (
        StepDefinition(id="a", agent_id="agent-1", prompt="p {{input.x}}", max_attempts=2, timeout_seconds=5),
        StepDefinition(id="b", team_id="team-1", prompt="{{steps.a.output}}", depends_on=("a",), worker_queue_id="q"),
    )
    return Workflow(
        id=f"{org}-{name}", organization_id=org, name=name, description=None, steps=steps, created_at=T0, updated_at=T0
    )


async def test_workflows_and_runs_round_trip_and_are_scoped(uow: UowFactory) -> None:
    stored = workflow()
    run = WorkflowRun(
        id="run-1",
        organization_id=ORG,
        workflow_id=stored.id,
        status=RunStatus.RUNNING,
        input={"x": [1, {"y": "z"}]},
        worker_queue_id="q",
        definition=stored.steps,
        steps=(StepRun(id="a", status=StepStatus.RUNNING, execution_id="e", attempt=1, started_at=T0), StepRun(id="b")),
        last_seq=1,
        created_at=T0,
        updated_at=T0,
        started_at=T0,
    )
    first = RunEvent(
        run_id=run.id, organization_id=ORG, seq=1, type=RunEventType.RUN, data={"status": "running"}, created_at=T0
    )
    async with uow() as work:
        await work.workflows.add(stored)
        await work.workflow_runs.add(run, [first])
        await work.commit()
    async with uow() as work:
        with pytest.raises(Conflict):
            await work.workflows.add(replace(stored, id="other"))
    async with uow() as work:
        assert await work.workflows.get(ORG, stored.id) == stored
        assert await work.workflows.get("org-b", stored.id) is None
        assert await work.workflow_runs.get(ORG, run.id) == run
        assert await work.workflow_runs.get("org-b", run.id) is None
        locked = await work.workflow_runs.get(ORG, run.id, for_update=True)
        assert locked is not None
        done = replace(
            locked,
            status=RunStatus.SUCCEEDED,
            last_seq=2,
            finished_at=T0,
            steps=(replace(locked.steps[0], status=StepStatus.SUCCEEDED, output="out"), locked.steps[1]),
        )
        second = replace(first, seq=2, data={"status": "succeeded"})
        await work.workflow_runs.update(done, [second])
        await work.commit()
    async with uow() as work:
        assert await work.workflow_runs.get(ORG, run.id) == done
        assert await work.workflow_runs.events_after(ORG, run.id, 0, 10) == [first, second]
        assert await work.workflow_runs.events_after(ORG, run.id, 1, 10) == [second]
        assert await work.workflow_runs.events_after("org-b", run.id, 0, 10) == []
        page = PageRequest(limit=10, offset=0)
        assert (await work.workflow_runs.list_page(ORG, page, workflow_id=stored.id, status=None))[1] == 1
        assert (await work.workflow_runs.list_page(ORG, page, workflow_id=None, status=RunStatus.FAILED))[1] == 0
        assert (await work.workflow_runs.list_page("org-b", page, workflow_id=None, status=None))[1] == 0
        await work.workflows.delete(ORG, stored.id)
        await work.commit()
    async with uow() as work:
        assert await work.workflows.get(ORG, stored.id) is None


async def _setup(ports: Ports, steps: tuple[StepDefinition, ...]) -> tuple[str, str]:
    """A workflow of `steps` (their agent_id is replaced by a real agent's) and a queue: (workflow id, queue id)."""
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="agent"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="env"))
    queue = await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))
    real = tuple(replace(step, agent_id=agent.id) for step in steps)
    created = await usecases.create_workflow(ports, ORG, usecases.CreateWorkflow(name="flow", steps=real))
    return created.id, queue.queue.id


def _ports(uow: UowFactory, clock: ManualClock | None = None) -> Ports:
    return Ports(uow=uow, clock=clock or ManualClock(T0), ids=UuidGenerator(), max_attempts=2, owners=OWNERS)


DIAMOND = (
    StepDefinition(id="a", agent_id="-", prompt="start {{input.x}}"),
    StepDefinition(id="b", agent_id="-", prompt="b({{steps.a.output}})", depends_on=("a",)),
    StepDefinition(id="c", agent_id="-", prompt="c({{steps.a.output}})", depends_on=("a",)),
    StepDefinition(id="d", agent_id="-", prompt="{{steps.b.output}}+{{steps.c.output}}", depends_on=("b", "c")),
)


async def test_a_diamond_runs_on_every_store(uow: UowFactory) -> None:
    ports = _ports(uow)
    workflow_id, queue_id = await _setup(ports, DIAMOND)
    run = await runs.start_run(ports, ORG, workflow_id, runs.StartRun(worker_queue_id=queue_id, input={"x": 1}))
    prompts = []
    while (lease := await leases.try_lease(ports, ORG, queue_id, "w1")) is not None:
        execution = lease.execution
        prompts.append(execution.prompt)
        done = completion.CompleteCommand(
            worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response=execution.prompt.upper()
        )
        await completion.complete(ports, ORG, execution.id, done)
    assert prompts[0] == "start 1"
    assert sorted(prompts[1:3]) == ["b(START 1)", "c(START 1)"]
    assert prompts[3] == "B(START 1)+C(START 1)"
    final = await runs.get_run(ports, ORG, run.id)
    assert final.status is RunStatus.SUCCEEDED
    assert [step.status for step in final.steps] == [StepStatus.SUCCEEDED] * 4
    events = await runs.events_after(ports, ORG, run.id, 0)
    assert [event.seq for event in events] == list(range(1, final.last_seq + 1))
    assert events[-1].data["status"] == "succeeded"


async def test_the_reapers_failure_of_the_last_attempt_ends_the_step(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    steps = (
        StepDefinition(id="a", agent_id="-", prompt="a"),
        StepDefinition(id="b", agent_id="-", prompt="b", depends_on=("a",)),
    )
    workflow_id, queue_id = await _setup(ports, steps)
    run = await runs.start_run(ports, ORG, workflow_id, runs.StartRun(worker_queue_id=queue_id))
    for _ in range(ports.max_attempts):  # each lease expires; the last one fails the execution
        assert await leases.try_lease(ports, ORG, queue_id, "w1") is not None
        clock.advance(ports.lease_timeout_seconds + 1)
        assert await lease_ends.reap_expired_leases(ports) == 1
    final = await runs.get_run(ports, ORG, run.id)
    assert final.status is RunStatus.FAILED
    assert [step.status for step in final.steps] == [StepStatus.FAILED, StepStatus.SKIPPED]
    assert "lease expired" in (final.steps[0].error or "")
    assert await leases.try_lease(ports, ORG, queue_id, "w1") is None


async def test_two_parallel_steps_ending_at_once_start_their_join_once(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    ports = Ports(uow=lambda: SqlUnitOfWork(postgres_engine), clock=ManualClock(T0), ids=UuidGenerator(), owners=OWNERS)
    workflow_id, queue_id = await _setup(ports, DIAMOND)
    run = await runs.start_run(ports, ORG, workflow_id, runs.StartRun(worker_queue_id=queue_id, input={"x": 1}))
    first = await leases.try_lease(ports, ORG, queue_id, "w1")
    assert first is not None
    await completion.complete(
        ports,
        ORG,
        first.execution.id,
        completion.CompleteCommand(worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response="A"),
    )
    held = [await leases.try_lease(ports, ORG, queue_id, worker) for worker in ("w1", "w2")]
    finishing = [
        completion.complete(
            ports,
            ORG,
            lease.execution.id,
            completion.CompleteCommand(worker_id=worker, attempt=1, status=ExecutionStatus.COMPLETED, response=worker),
        )
        for lease, worker in zip(held, ("w1", "w2"), strict=True)
        if lease is not None
    ]
    assert len(finishing) == 2

    async def both() -> None:  # (started only once the holder holds the run: gather would start them at once)
        await asyncio.gather(*finishing)

    # both completions wait for the run's row, held by another transaction, then go one after the other
    await behind(postgres_url, [f"SELECT 1 FROM workflow_runs WHERE id = '{run.id}' FOR UPDATE"], both())
    after = await runs.get_run(ports, ORG, run.id)
    assert [step.status for step in after.steps] == [StepStatus.SUCCEEDED] * 3 + [StepStatus.RUNNING]
    join = await leases.try_lease(ports, ORG, queue_id, "w3")
    assert join is not None
    assert join.execution.id == after.steps[3].execution_id
    assert join.execution.prompt in ("w1+w2", "w2+w1")
    assert await leases.try_lease(ports, ORG, queue_id, "w3") is None, "the join was started once"
