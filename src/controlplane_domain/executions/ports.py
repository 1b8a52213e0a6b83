"""The executions' repository port (a unit of work's `executions`), with what its queries take and answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from controlplane_domain.agents.entity import Agent
from controlplane_domain.contexts.entity import ResolvedContext
from controlplane_domain.environments.entity import WorkerQueue
from controlplane_domain.executions.entity import (
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    LeaseTerms,
    PlanningTask,
    RunWith,
)
from controlplane_domain.paging import PageRequest
from controlplane_domain.webhooks.entity import Event

if TYPE_CHECKING:
    from controlplane_domain.ports import Ports, UnitOfWork


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionFilter:
    status: ExecutionStatus | None = None
    agent_id: str | None = None
    team_id: str | None = None
    worker_queue_id: str | None = None
    created_from: datetime | None = None  # created at or after (inclusive)
    created_to: datetime | None = None  # created before (exclusive)


class LeasingWorker(Protocol):
    """What a lease needs to know of the worker that asks (a `workers.entity.Worker` is one)."""

    @property
    def queue_id(self) -> str | None:
        """The queue it last leased from (a lease from another moves it there)."""


@dataclass(frozen=True, slots=True)
class Leased:
    """What a lease found and did: the queue, the worker as stored, the execution as leased (None: nothing was
    leased) and its agent."""

    queue: WorkerQueue | None
    worker: LeasingWorker | None
    execution: Execution | None
    agent: Agent | None


class ExecutionOwners(Protocol):
    """What executions work for (`Execution.has_owner`: a workflow run's step, a task plan's planning), as the
    executions' use cases reach it: `Ports.owners` (the domain's own is `controlplane_domain.owners.OWNERS`)."""

    async def ended(
        self, ports: Ports, uow: UnitOfWork, before: Execution, after: Execution, rows: Sequence[ExecutionEvent]
    ) -> tuple[bool, set[str]]:
        """`executions.record` of an execution with an owner that ends, and what its end changes for its owner,
        in the unit of work: (recorded, the topics to publish once committed)."""

    async def planning(self, uow: UnitOfWork, execution: Execution) -> PlanningTask | None:
        """A leased planning execution's task, read in the lease's unit of work (None when its plan is gone)."""


@dataclass(frozen=True, slots=True)
class LeaseExtras:
    """What a lease reads besides the lease, in one read: the context stored with the execution (None: it had
    none) and whether the queue's environment has skills attached."""

    context: ResolvedContext | None
    environment_has_skills: bool


class ExecutionRepository(Protocol):
    async def get(self, organization_id: str, execution_id: str, *, for_update: bool = False) -> Execution | None:
        """With `for_update`, the row stays locked until the transaction ends."""

    async def list_page(
        self, organization_id: str, page: PageRequest, where: ExecutionFilter
    ) -> tuple[list[Execution], int]: ...

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        """Lease the oldest queued execution of the queue, if the queue exists and is active, as
        `executions.leased` decides: the change and its event are one atomic write, like `record`. Executions
        another lease is taking are skipped, never leased twice. Reads the worker and the execution's agent with
        it."""

    async def lease_extras(self, organization_id: str, execution_id: str, environment_id: str) -> LeaseExtras:
        """In one read, what a leased execution needs besides its agent or team (`executions.resolution`)."""

    async def running_for_worker(self, organization_id: str, worker_id: str) -> list[Execution]: ...

    async def extend_leases(self, organization_id: str, worker_id: str, until: datetime) -> int:
        """Move the lease expiry of every execution the worker holds (one targeted update, no lost updates)."""

    async def expired_leases(self, now: datetime, limit: int) -> list[Execution]:
        """Operator query across organizations: running executions whose lease has expired."""

    async def count_queued(self, organization_id: str, queue_ids: Sequence[str]) -> dict[str, int]: ...

    async def count_unfinished(self, organization_id: str, queue_id: str) -> int:
        """The queue's queued and running executions, once every write of an execution in flight has committed;
        none can be added until the unit of work ends (a lock on the executions, or a store that serializes
        writers), so that a queue deleted on a count of 0 never ends up holding one."""

    async def record(
        self,
        before: Execution | None,
        after: Execution,
        events: Sequence[ExecutionEvent],
        *,
        context: ResolvedContext | None = None,
        outbox: Sequence[Event] = (),
    ) -> bool:
        """Store a change of one execution with the events that tell it and the webhook events it announces
        (`outbox`: each written as `webhooks.enqueue` writes it), as one atomic write: `after` is added
        when `before` is None (with its resolved `context`, when one is given: only then); otherwise it replaces
        `before` only if the stored execution is still at `before.last_seq` (compare-and-set: every change of an
        execution appends events). False, with nothing written, when another writer changed it first."""

    async def add_if_found(
        self, execution: Execution, events: Sequence[ExecutionEvent], context: ResolvedContext | None = None
    ) -> tuple[bool, bool, Execution]:
        """Add an agent's new execution with its events (and its resolved `context`, when one is given), as
        `record(None, ...)` does, only if its worker queue and its agent exist in its organization, with what its
        agent runs with (`run_with`) as they are in this write; answers (queue found, agent found, the execution as
        added, else as given)."""

    async def run_with(self, organization_id: str, agent_id: str) -> RunWith | None:
        """What a new execution of the agent runs with (`entity.agent_run_with`); None: no such agent."""

    async def events_after(
        self, organization_id: str, execution_id: str, after_seq: int, limit: int
    ) -> list[ExecutionEvent]: ...
