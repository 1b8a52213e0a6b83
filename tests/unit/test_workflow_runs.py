"""Workflow runs on random graphs, on the memory store: whatever the graph, the steps' fates (completed, failed,
lease expired, cancelled, timed out, each attempt) and the order in which held executions end, every run ends, no step
starts before each step it depends on succeeded, and no step runs twice at once or more often than allowed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from controlplane_adapters.clock import ManualClock, UuidGenerator
from controlplane_adapters.memory.bus import LocalEventBus
from controlplane_adapters.memory.store import MemoryStore
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.errors import ValidationFailed
from controlplane_domain.executions import completion, lease_ends, leases
from controlplane_domain.executions.entity import Execution, ExecutionStatus
from controlplane_domain.owners import OWNERS
from controlplane_domain.ports import Ports
from controlplane_domain.workflows import runs, usecases
from controlplane_domain.workflows.entity import RunStatus, StepDefinition, StepStatus
from controlplane_domain.workflows.graph import check_steps, find_cycle
from controlplane_domain.workflows.timeouts import time_out_steps

ORG = "org"
FATES = ("completed", "failed", "expire", "cancelled", "timeout")
TIMEOUT_SECONDS = 30


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[StepDefinition], dict[str, list[str]]]:
    """A random DAG of 1 to 7 steps (each depends on some earlier ones), each with its attempts' fates."""
    count = draw(st.integers(1, 7))
    steps, fates = [], {}
    for index in range(count):
        step_id = f"s{index}"
        earlier = [f"s{i}" for i in range(index)]
        depends = draw(st.lists(st.sampled_from(earlier), unique=True, max_size=3)) if earlier else []
        attempts = draw(st.integers(1, 3))
        prompt = " ".join(f"{{{{steps.{d}.output}}}}" for d in depends) or "start"
        steps.append(
            StepDefinition(
                id=step_id,
                agent_id="-",
                prompt=prompt,
                depends_on=tuple(depends),
                max_attempts=attempts,
                timeout_seconds=draw(st.sampled_from((None, TIMEOUT_SECONDS))),
            )
        )
        weights = st.sampled_from(("completed", "completed", "completed", "failed", "expire", "cancelled", "timeout"))
        fates[step_id] = draw(st.lists(weights, min_size=attempts * 2, max_size=attempts * 2))
    return steps, fates


@dataclass
class Watch:
    started: dict[str, list[str]] = field(default_factory=dict)  # step -> its executions, in the order leased
    violations: list[str] = field(default_factory=list)


async def _scenario(steps: list[StepDefinition], fates: dict[str, list[str]], order: list[int]) -> Watch:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    ports = Ports(
        uow=MemoryStore().unit_of_work,
        clock=clock,
        ids=UuidGenerator(),
        bus=LocalEventBus(),
        max_attempts=1,
        owners=OWNERS,
    )
    agent = await agents.create_agent(ports, ORG, agents.CreateAgent(name="a"))
    environment = await environments.create_environment(ports, ORG, environments.CreateEnvironment(name="e"))
    queue = (await environments.create_queue(ports, ORG, environment.id, environments.CreateQueue(name="q"))).queue
    real = tuple(
        StepDefinition(
            id=s.id,
            agent_id=agent.id,
            prompt=s.prompt,
            depends_on=s.depends_on,
            max_attempts=s.max_attempts,
            timeout_seconds=s.timeout_seconds,
        )
        for s in steps
    )
    workflow = await usecases.create_workflow(ports, ORG, usecases.CreateWorkflow(name="w", steps=real))
    run = await runs.start_run(ports, ORG, workflow.id, runs.StartRun(worker_queue_id=queue.id))
    watch = Watch()
    timeouts = {step.id: step.timeout_seconds for step in steps}
    held: list[tuple[Execution, str]] = []
    turns = 0
    while True:
        turns += 1
        assert turns < 500, "the run never ended"
        lease = await leases.try_lease(ports, ORG, queue.id, f"w{turns}")
        if lease is not None:
            execution = lease.execution
            step_id = execution.workflow_step_id or ""
            now = await runs.get_run(ports, ORG, run.id)
            definition = now.definition_of(step_id)
            for dependency in definition.depends_on:
                if now.step(dependency).status is not StepStatus.SUCCEEDED:  # type: ignore[union-attr]
                    watch.violations.append(f"{step_id} started before {dependency} succeeded")
            if any(other.workflow_step_id == step_id for other, _ in held):
                watch.violations.append(f"{step_id} runs twice at once")
            watch.started.setdefault(step_id, []).append(execution.id)
            held.append((execution, f"w{turns}"))
            if order[turns % len(order)] % 2 == 0:
                continue  # lease another before ending one
        if not held:
            break
        execution, worker = held.pop(order[turns % len(order)] % len(held))
        step_id = execution.workflow_step_id or ""
        fate = fates[step_id][(len(watch.started[step_id]) - 1) % len(fates[step_id])]
        if fate == "expire" or (fate == "timeout" and timeouts[step_id] is not None):
            if fate == "expire":
                clock.advance(ports.lease_timeout_seconds + 1)
                await lease_ends.reap_expired_leases(ports)  # (what else expired meanwhile goes too)
            else:
                clock.advance(TIMEOUT_SECONDS)
                await time_out_steps(ports)  # (so do the other held steps past their timeout)
            held = [(e, w) for e, w in held if (await _status(ports, e.id)) is ExecutionStatus.RUNNING]
            continue
        if fate == "timeout":  # a step without a timeout: it fails instead
            fate = "failed"
        status = ExecutionStatus(fate)
        command = completion.CompleteCommand(
            worker_id=worker, attempt=execution.attempt, status=status, response=f"out-{step_id}", error=None
        )
        await completion.complete(ports, ORG, execution.id, command)
    final = await runs.get_run(ports, ORG, run.id)
    if not final.is_terminal:
        watch.violations.append(f"the run did not end: {final.status}")
    for step in final.steps:
        allowed = final.definition_of(step.id).max_attempts
        if len(watch.started.get(step.id, [])) > allowed:
            watch.violations.append(f"{step.id} ran {len(watch.started[step.id])} times, at most {allowed} allowed")
        if step.status is StepStatus.SUCCEEDED and step.execution_id != watch.started[step.id][-1]:
            watch.violations.append(f"{step.id} succeeded with an execution other than its last")
        if step.status in (StepStatus.PENDING, StepStatus.RUNNING):
            watch.violations.append(f"{step.id} is still {step.status} in an ended run")
    failed = any(step.status is StepStatus.FAILED for step in final.steps)
    if failed != (final.status is RunStatus.FAILED):
        watch.violations.append(f"run {final.status} with steps {[s.status for s in final.steps]}")
    return watch


async def _status(ports: Ports, execution_id: str) -> ExecutionStatus:
    async with ports.read() as uow:
        found = await uow.executions.get(ORG, execution_id)
    assert found is not None
    return found.status


@settings(max_examples=80, deadline=None)
@given(graphs(), st.lists(st.integers(0, 50), min_size=1, max_size=20))
def test_every_run_ends_and_respects_its_graph(
    graph: tuple[list[StepDefinition], dict[str, list[str]]], order: list[int]
) -> None:
    steps, fates = graph
    watch = asyncio.run(_scenario(steps, fates, order))
    assert watch.violations == []
    assert watch.started, "at least the first step ran"


@settings(max_examples=80, deadline=None)
@given(graphs(), st.data())
def test_a_back_edge_is_a_cycle_named_along_its_path(
    graph: tuple[list[StepDefinition], dict[str, list[str]]], data: st.DataObject
) -> None:
    steps, _ = graph
    check_steps(steps)  # a DAG passes
    assert find_cycle(steps) is None
    chained = [s for s in steps if s.depends_on]
    if not chained:
        return
    child = data.draw(st.sampled_from(chained))
    parent = child.depends_on[0]
    looped = [
        StepDefinition(id=s.id, agent_id="-", prompt="x", depends_on=(*s.depends_on, child.id)) if s.id == parent else s
        for s in steps
    ]
    cycle = find_cycle(looped)
    assert cycle is not None
    assert cycle[0] == cycle[-1]
    by_id = {s.id: s for s in looped}
    assert all(cycle[i + 1] in by_id[cycle[i]].depends_on for i in range(len(cycle) - 1))
    try:
        check_steps(looped)
    except ValidationFailed as error:
        assert "cycle" in str(error)
    else:
        raise AssertionError("a cycle passed the checks")
