"""The lease rule run in steps, for the stores that read first and then record (memory; SQLite, whose writer holds
the database lock); Postgres runs it as one statement (`controlplane_adapters/executions/lease.py`)."""

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
    """`ExecutionRepository.lease_next` for a store that reads first, then records (memory; SQLite, whose
    writer holds the database lock): `execution` is the queue's oldest queued one, `record` the store's own."""
    if queue is None:
        return Leased(None, None, None, None)
    if queue.status is not QueueStatus.ACTIVE or execution is None:
        return Leased(queue, worker, None, None)
    running, events = leased(execution, terms)
    if not await record(execution, running, events):  # the writer holds the lock: only a broken store fails
        raise TransientFailure("the execution changed while it was being leased")
    return Leased(queue, worker, running, agent)
