"""The execution lifecycle under any sequence of operations (hypothesis state machine, memory adapters):
no illegal transition is accepted, terminal states are final, event sequence numbers are unique and gap-free."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

from controlplane_adapters.clock import ManualClock
from controlplane_domain.agents import usecases as agents
from controlplane_domain.environments import usecases as environments
from controlplane_domain.errors import Conflict, DomainError
from controlplane_domain.executions import completion, execute, lease_ends, leases, queries
from controlplane_domain.executions.entity import ALLOWED, TERMINAL, EventType, ExecutionStatus, NewEvent, TargetType
from controlplane_domain.executions.ports import ExecutionFilter
from controlplane_domain.paging import PageRequest
from controlplane_domain.workers import usecases as workers
from controlplane_domain.workers.flushing import flush_heartbeats
from tests.support import memory_ports

T = TypeVar("T")
ORG = "org"
WORKERS = ["w1", "w2", "w3"]
S = ExecutionStatus


class Lifecycle(RuleBasedStateMachine):
    execution_ids = Bundle("executions")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = ManualClock()
        self.ports = memory_ports(self.clock, write_behind=True)
        agent = self.run(agents.create_agent(self.ports, ORG, agents.CreateAgent(name="a")))
        environment = self.run(
            environments.create_environment(self.ports, ORG, environments.CreateEnvironment(name="e"))
        )
        queue = self.run(environments.create_queue(self.ports, ORG, environment.id, environments.CreateQueue(name="q")))
        self.agent_id, self.queue_id = agent.id, queue.queue.id
        self.seen: dict[str, ExecutionStatus] = {}
        self.finished: dict[str, ExecutionStatus] = {}

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coroutine)

    def teardown(self) -> None:
        self.loop.close()

    @rule(target=execution_ids)
    def execute(self) -> str:
        command = execute.ExecuteCommand(prompt="do it", worker_queue_id=self.queue_id)
        execution = self.run(execute.execute(self.ports, ORG, TargetType.AGENT, self.agent_id, command))
        assert execution.status is S.QUEUED
        return execution.id

    @rule(worker=st.sampled_from(WORKERS))
    def lease(self, worker: str) -> None:
        leased = self.run(leases.try_lease(self.ports, ORG, self.queue_id, worker))
        if leased is not None:
            assert leased.execution.status is S.RUNNING
            assert leased.execution.worker_id == worker

    @rule(
        execution_id=execution_ids, worker=st.sampled_from(WORKERS), attempt=st.integers(1, 4), count=st.integers(1, 3)
    )
    def append(self, execution_id: str, worker: str, attempt: int, count: int) -> None:
        before = self.run(queries.get_execution(self.ports, ORG, execution_id))
        events = [NewEvent(type=EventType.MESSAGE_CHUNK, data={"text": str(i)}) for i in range(count)]
        try:
            after = self.run(completion.append_events(self.ports, ORG, execution_id, worker, attempt, events))
        except Conflict:
            holds = before.worker_id == worker and before.attempt == attempt
            assert not (holds and before.status in (S.RUNNING, S.WAITING_FOR_INPUT))
            return
        assert before.worker_id == worker
        assert before.attempt == attempt
        assert before.status is S.RUNNING
        assert after.last_seq == before.last_seq + count

    @rule(
        execution_id=execution_ids,
        worker=st.sampled_from(WORKERS),
        attempt=st.integers(1, 4),
        outcome=st.sampled_from([S.COMPLETED, S.FAILED, S.CANCELLED]),
    )
    def complete(self, execution_id: str, worker: str, attempt: int, outcome: ExecutionStatus) -> None:
        before = self.run(queries.get_execution(self.ports, ORG, execution_id))
        command = completion.CompleteCommand(worker_id=worker, attempt=attempt, status=outcome, response="r")
        try:
            after = self.run(completion.complete(self.ports, ORG, execution_id, command))
        except Conflict:
            current = before.worker_id == worker and before.attempt == attempt and before.status is S.RUNNING
            assert not current
            return
        if before.is_terminal:
            assert after == before, "repeating a completion changes nothing"
        else:
            assert before.status is S.RUNNING
            assert after.status is outcome

    @rule(execution_id=execution_ids)
    def cancel(self, execution_id: str) -> None:
        before = self.run(queries.get_execution(self.ports, ORG, execution_id))
        try:
            after = self.run(completion.cancel(self.ports, ORG, execution_id))
        except Conflict:
            assert before.is_terminal
            return
        if before.status is S.QUEUED:
            assert after.status is S.CANCELLED
        else:
            assert after.cancel_requested
            assert after.status is before.status

    @rule(worker=st.sampled_from(WORKERS))
    def heartbeat(self, worker: str) -> None:
        command = workers.RecordHeartbeat(worker_id=worker, environment_name="e")
        self.run(workers.record_heartbeat(self.ports, ORG, command))

    @rule(seconds=st.sampled_from([1, 30, 61, 200]))
    def time_passes_and_reaper_runs(self, seconds: int) -> None:
        self.clock.advance(seconds)
        self.run(flush_heartbeats(self.ports))  # what the background flusher does
        self.run(lease_ends.reap_expired_leases(self.ports))

    @invariant()
    def lifecycle_holds(self) -> None:
        page = self.run(queries.list_executions(self.ports, ORG, PageRequest(limit=200), ExecutionFilter()))
        for execution in page.items:
            previous = self.seen.get(execution.id)
            if previous is not None and previous is not execution.status:
                assert execution.status in ALLOWED.get(previous, frozenset()), (previous, execution.status)
            if execution.id in self.finished:
                assert execution.status is self.finished[execution.id], "terminal states are final"
            if execution.status in TERMINAL:
                self.finished[execution.id] = execution.status
            self.seen[execution.id] = execution.status
            assert execution.attempt <= execution.max_attempts
            events = self.run(queries.list_events(self.ports, ORG, execution.id, PageRequest(limit=200))).items
            assert [event.seq for event in events] == list(range(1, execution.last_seq + 1))
            done = [event for event in events if event.type is EventType.DONE]
            if execution.is_terminal:
                assert len(done) == 1
                assert events[-1] is done[0]
                assert done[0].data["status"] == execution.status.value
            else:
                assert not done


def test_a_domain_error_is_the_only_kind_of_refusal() -> None:
    assert issubclass(Conflict, DomainError)


TestLifecycle = Lifecycle.TestCase
TestLifecycle.settings = settings(max_examples=60, stateful_step_count=35, deadline=None)
