"""The lease rule run in steps: the candidate read, then `leased` decides and the store records it. A store whose
writer holds its write lock from its first read calls it; a store may instead send the rule as one statement, which
its strategy module keeps pinned to `leased` by a property test (CONTRIBUTING.md, "One rule, one place")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from controlplane_domain.agents.entity import Agent
from controlplane_domain.environments.entity import QueueStatus, WorkerQueue
from controlplane_domain.errors import TransientFailure
from controlplane_domain.executions.entity import Execution, ExecutionEvent, LeaseTerms, leased
from controlplane_domain.executions.ports import Leased, LeasingWorker


async def lease_in_steps(
    queue: WorkerQueue | None,
    worker: LeasingWorker | None,
    execution: Execution | None,
    agent: Agent | None,
    terms: LeaseTerms,
    record: Callable[[Execution, Execution, Sequence[ExecutionEvent]], Awaitable[bool]],
) -> Leased:
    """`ExecutionRepository.lease_next` as a read, then the record (a store whose writer holds its write lock
    from its first read): `execution` is the queue's oldest queued one, `record` the store's own."""
    if queue is None:
        return Leased(None, None, None, None)
    if queue.status is not QueueStatus.ACTIVE or execution is None:
        return Leased(queue, worker, None, None)
    running, events = leased(execution, terms)
    if not await record(execution, running, events):  # the writer holds the lock: only a broken store fails
        raise TransientFailure("the execution changed while it was being leased")
    return Leased(queue, worker, running, agent)
