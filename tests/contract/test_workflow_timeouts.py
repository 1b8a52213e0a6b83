"""Workflow step timeouts on every store, with a clock the tests move: a step's execution running past its
`timeout_seconds` (counted from its lease) is timed out by the sweep and the step follows its retry policy; each
timeout happens once whichever and however many nodes sweep at once (also two engines on one Postgres)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.sql.engine import create_engine
from controlplane_adapters.sql.unit_of_work import SqlUnitOfWork
from controlplane_domain.executions import completion, leases
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.executions.transitions import StaleAttempt
from controlplane_domain.owners import OWNERS
from controlplane_domain.ports import Ports
from controlplane_domain.workers.usecases import RecordHeartbeat, record_heartbeat
from controlplane_domain.workflows import runs
from controlplane_domain.workflows.entity import RunStatus, StepDefinition, StepStatus, WorkflowRun
from controlplane_domain.workflows.timeouts import Swept, check_run, time_out_steps
from tests.contract.conftest import UowFactory
from tests.contract.test_workflows import ORG, T0, _ports, _setup

CHAIN = (
    StepDefinition(id="a", agent_id="-", prompt="a", max_attempts=2, timeout_seconds=30),
    StepDefinition(id="b", agent_id="-", prompt="b {{steps.a.output}}", depends_on=("a",)),
)


async def _execution(ports: Ports, execution_id: str | None) -> Execution:
    assert execution_id is not None
    async with ports.read() as uow:
        found = await uow.executions.get(ORG, execution_id)
    assert found is not None
    return found


async def _start(ports: Ports, steps: tuple[StepDefinition, ...] = CHAIN) -> tuple[WorkflowRun, str]:
    workflow_id, queue_id = await _setup(ports, steps)
    run = await runs.start_run(ports, ORG, workflow_id, runs.StartRun(worker_queue_id=queue_id))
    return run, queue_id


async def test_a_step_past_its_timeout_is_timed_out_retried_then_fails_its_run(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    run, queue_id = await _start(ports)
    clock.advance(10)  # queued time does not count: the timeout runs from the lease
    first = await leases.try_lease(ports, ORG, queue_id, "w1")
    assert first is not None
    clock.advance(25)  # 35 s after it was queued, 25 s after its lease
    assert (await time_out_steps(ports)).timed_out == 0
    assert (await _execution(ports, first.execution.id)).status is ExecutionStatus.RUNNING
    clock.advance(5)  # 30 s after its lease
    assert (await time_out_steps(ports)).timed_out == 1
    timed = await _execution(ports, first.execution.id)
    assert timed.status is ExecutionStatus.TIMED_OUT
    assert timed.error == "timed out: the workflow step's timeout of 30 seconds passed"
    assert timed.finished_at == clock.now()
    late = completion.CompleteCommand(worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response="late")
    with pytest.raises(StaleAttempt):
        await completion.complete(ports, ORG, first.execution.id, late)
    retried = await runs.get_run(ports, ORG, run.id)
    step = retried.steps[0]
    assert (step.status, step.attempt, retried.status) == (StepStatus.RUNNING, 2, RunStatus.RUNNING)
    assert step.execution_id != first.execution.id
    second = await leases.try_lease(ports, ORG, queue_id, "w2")
    assert second is not None
    assert second.execution.id == step.execution_id
    clock.advance(31)
    assert (await time_out_steps(ports)).timed_out == 1
    final = await runs.get_run(ports, ORG, run.id)
    assert final.status is RunStatus.FAILED
    assert [s.status for s in final.steps] == [StepStatus.FAILED, StepStatus.SKIPPED]
    assert final.steps[0].error == "timed out: the workflow step's timeout of 30 seconds passed"
    assert final.timeout_check_at is None
    assert await leases.try_lease(ports, ORG, queue_id, "w3") is None
    events = await runs.events_after(ports, ORG, run.id, 0)
    assert [(e.data.get("step_id"), e.data["status"]) for e in events if e.data.get("step_id") == "a"] == [
        ("a", "running"), ("a", "running"), ("a", "failed")]  # fmt: skip


async def test_steps_that_end_in_time_or_wait_for_a_worker_are_never_timed_out(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    run, queue_id = await _start(ports)
    clock.advance(3600)  # an hour queued: no worker took it, nothing ran too long
    assert (await time_out_steps(ports)).timed_out == 0
    waiting = await runs.get_run(ports, ORG, run.id)
    assert waiting.steps[0].status is StepStatus.RUNNING
    assert waiting.timeout_check_at == clock.now() + timedelta(seconds=30)  # looked at again, were it leased now
    lease = await leases.try_lease(ports, ORG, queue_id, "w1")
    assert lease is not None
    clock.advance(29)
    done = completion.CompleteCommand(worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED, response="A")
    await completion.complete(ports, ORG, lease.execution.id, done)
    clock.advance(60)
    assert await time_out_steps(ports) == Swept(0, 0)  # nothing due: b has no timeout
    after = await runs.get_run(ports, ORG, run.id)
    assert [s.status for s in after.steps] == [StepStatus.SUCCEEDED, StepStatus.RUNNING]
    assert after.timeout_check_at is None


async def test_a_check_is_claimed_by_compare_and_set(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    run, queue_id = await _start(ports)
    assert await leases.try_lease(ports, ORG, queue_id, "w1") is not None
    clock.advance(30)
    async with uow() as work:
        (seen,) = await work.workflow_runs.timeouts_due(clock.now(), 10, per_organization=10)
        assert await work.workflow_runs.timeouts_due(clock.now() - timedelta(seconds=1), 10, per_organization=10) == []
    assert await check_run(ports, seen, clock.now()) == 1  # one node checks the run as it read it
    assert await check_run(ports, seen, clock.now()) == 0  # another that read it at the same time: its claim fails
    async with uow() as work:
        assert not await work.workflow_runs.claim_timeout_check(seen)
        current = await work.workflow_runs.get(ORG, run.id)
        assert current is not None
        assert await work.workflow_runs.claim_timeout_check(current)
    assert (await runs.get_run(ports, ORG, run.id)).steps[0].attempt == 2


async def test_two_nodes_time_out_each_step_once(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    first, second = _ports(uow, clock), _ports(uow, clock)
    run, queue_id = await _start(first, (replace(CHAIN[0], max_attempts=1), CHAIN[1]))
    start = runs.StartRun(worker_queue_id=queue_id)
    started = [run] + [await runs.start_run(first, ORG, run.workflow_id, start) for _ in range(3)]
    while await leases.try_lease(first, ORG, queue_id, "w1") is not None:
        pass
    clock.advance(30)
    swept = await asyncio.gather(time_out_steps(first), time_out_steps(second), time_out_steps(first))
    assert sum(each.timed_out for each in swept) == 4
    for run in started:
        final = await runs.get_run(first, ORG, run.id)
        assert final.status is RunStatus.FAILED
        assert final.steps[0].attempt == 1
        assert [e.data["status"] for e in await runs.events_after(first, ORG, run.id, 0) if e.type.value == "run"] == [
            "running", "failed"]  # fmt: skip


async def test_the_worker_of_a_timed_out_step_is_told_to_stop(uow: UowFactory) -> None:
    clock = ManualClock(T0)
    ports = _ports(uow, clock)
    _, queue_id = await _start(ports)
    lease = await leases.try_lease(ports, ORG, queue_id, "w1")
    assert lease is not None
    beat = RecordHeartbeat(worker_id="w1", environment_name="env", current_task_id=lease.execution.id)
    assert (await record_heartbeat(ports, ORG, beat)).commands == []
    clock.advance(30)
    assert (await time_out_steps(ports)).timed_out == 1
    commands = (await record_heartbeat(ports, ORG, beat)).commands
    assert [(c.type, c.execution_id) for c in commands] == [("cancel", lease.execution.id)]
    other = replace(beat, worker_id="w2")
    assert (await record_heartbeat(ports, ORG, other)).commands == []  # not its task


async def test_two_engines_on_one_postgres_time_out_each_step_once(
    postgres_engine: AsyncEngine, postgres_url: str
) -> None:
    other = create_engine(postgres_url)
    try:
        clock = ManualClock(T0)

        def node(engine: AsyncEngine) -> Ports:
            return Ports(
                uow=lambda: SqlUnitOfWork(engine), clock=clock, ids=UuidGenerator(), max_attempts=2, owners=OWNERS
            )

        nodes = [node(postgres_engine), node(other)]
        run, queue_id = await _start(nodes[0])
        made = [run] + [
            await runs.start_run(nodes[0], ORG, run.workflow_id, runs.StartRun(worker_queue_id=queue_id))
            for _ in range(9)
        ]
        for attempt in (1, 2):
            while await leases.try_lease(nodes[0], ORG, queue_id, "w") is not None:
                pass
            clock.advance(30)
            swept = await asyncio.gather(*(time_out_steps(node) for node in nodes for _ in range(2)))
            assert sum(each.timed_out for each in swept) == len(made), f"attempt {attempt}"
        for each in made:
            final = await runs.get_run(nodes[1], ORG, each.id)
            assert (final.status, final.steps[0].attempt) == (RunStatus.FAILED, 2)
    finally:
        await other.dispose()
