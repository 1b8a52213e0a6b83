"""The operations' gauges on every store: live executions, queues' backlogs, the scheduler's lag; and an
execution's trace_parent kept from execute to lease to completion."""

from __future__ import annotations

from controlplane_adapters.clock import ManualClock
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.executions import completion, leases
from controlplane_domain.executions.entity import ExecutionStatus, TargetType
from controlplane_domain.executions.execute import ExecuteCommand, execute
from controlplane_domain.operations.usecases import read_gauges
from tests.contract.conftest import UowFactory
from tests.contract.test_jobs import ORG, at, cron_job, ports_on

TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


async def test_gauges_count_live_executions_backlogs_and_scheduler_lag(uow: UowFactory) -> None:
    clock = ManualClock(at(2026, 1, 1))
    ports = ports_on(uow, clock)
    empty = await read_gauges(ports)
    assert empty.executions == {"queued": 0, "running": 0, "waiting_for_input": 0}
    assert (empty.queues, empty.scheduler_lag_seconds) == ([], 0.0)
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="a"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    queue = (await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))).queue
    first = await execute(ports, ORG, TargetType.AGENT, agent.id, ExecuteCommand(prompt="p", worker_queue_id=queue.id))
    clock.advance(30)
    await execute(ports, ORG, TargetType.AGENT, agent.id, ExecuteCommand(prompt="p", worker_queue_id=queue.id))
    await execute(ports, ORG, TargetType.AGENT, agent.id, ExecuteCommand(prompt="p", worker_queue_id=queue.id))
    clock.advance(15)
    leased = await leases.try_lease(ports, ORG, queue.id, "w1")
    assert leased is not None
    assert leased.execution.id == first.id  # the oldest goes first: the two left were queued 15 s ago
    await cron_job(ports, "*/10 * * * *")  # next firing at 00:10
    clock.advance(11 * 60)
    gauges = await read_gauges(ports)
    assert gauges.executions == {"queued": 2, "running": 1, "waiting_for_input": 0}
    ((backlog),) = gauges.queues
    assert (backlog.organization_id, backlog.worker_queue_id, backlog.depth) == (ORG, queue.id, 2)
    assert backlog.oldest_queued_at == at(2026, 1, 1, 0, 0, 30)
    assert gauges.scheduler_lag_seconds == 105  # due at 00:10, now 00:11:45 (00:00:45 + 11 minutes)


async def test_an_execution_keeps_its_trace_parent_through_lease_and_completion(uow: UowFactory) -> None:
    ports = ports_on(uow, ManualClock(at(2026, 1, 1)))
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="traced"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    queue = (await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))).queue
    command = ExecuteCommand(prompt="p", worker_queue_id=queue.id, trace_parent=TRACE)
    created = await execute(ports, ORG, TargetType.AGENT, agent.id, command)
    assert created.trace_parent == TRACE
    leased = await leases.try_lease(ports, ORG, queue.id, "w1")
    assert leased is not None
    assert leased.execution.trace_parent == TRACE
    done = await completion.complete(
        ports, ORG, created.id, completion.CompleteCommand(worker_id="w1", attempt=1, status=ExecutionStatus.COMPLETED)
    )
    assert done.trace_parent == TRACE
    untraced = await execute(
        ports, ORG, TargetType.AGENT, agent.id, ExecuteCommand(prompt="p", worker_queue_id=queue.id)
    )
    assert untraced.trace_parent is None
