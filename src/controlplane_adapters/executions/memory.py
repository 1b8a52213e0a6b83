"""The executions and their events in the memory store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Self

from controlplane_adapters.agents.memory import MemoryAgentRepository
from controlplane_adapters.environments.memory import MemoryQueueRepository
from controlplane_adapters.memory.base import sorted_page
from controlplane_adapters.skills.memory import Attachments
from controlplane_adapters.webhooks.memory import MemoryWebhookRepository
from controlplane_adapters.workers.memory import MemoryWorkerRepository
from controlplane_domain.contexts.entity import ResolvedContext
from controlplane_domain.errors import Conflict
from controlplane_domain.executions.entity import (
    HELD,
    Execution,
    ExecutionEvent,
    ExecutionStatus,
    LeaseTerms,
    RunWith,
    agent_run_with,
    lease_order,
)
from controlplane_domain.executions.lease_steps import lease_in_steps
from controlplane_domain.executions.ports import ExecutionFilter, Leased, LeaseExtras
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.paging import PageRequest
from controlplane_domain.skills.entity import SkillOwner
from controlplane_domain.webhooks.entity import Event

if TYPE_CHECKING:
    from controlplane_adapters.memory.store import MemoryUnitOfWork

QUEUED = ExecutionStatus.QUEUED


class MemoryExecutionRepository:
    @classmethod
    def on(cls, unit: MemoryUnitOfWork) -> Self:
        """The repository of a memory unit of work (`areas.py`)."""
        return cls(
            unit.table("executions"),
            unit.table("events"),
            (unit.queues, unit.workers, unit.agents),
            unit.table("execution_contexts"),
            unit.table("skill_attachments"),
            unit.table("models"),
            unit.webhooks,
        )

    def __init__(
        self,
        rows: dict[str, Execution],
        events: dict[str, tuple[ExecutionEvent, ...]],
        related: tuple[MemoryQueueRepository, MemoryWorkerRepository, MemoryAgentRepository],
        contexts: dict[str, ResolvedContext],
        skill_attachments: Attachments | None = None,
        models: Mapping[str, LlmModel] | None = None,
        webhooks: MemoryWebhookRepository | None = None,
    ) -> None:
        self.rows = rows
        self.events = events
        self.related = related  # what a lease candidate is read with
        self.contexts = contexts  # execution id -> the context resolved when it was created (when not empty)
        self.skill_attachments = {} if skill_attachments is None else skill_attachments  # (a lease's extras)
        self.models: Mapping[str, LlmModel] = {} if models is None else models  # (what an agent runs with)
        self.webhooks = webhooks  # where a change's webhook events (`record`'s outbox) are written

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        queues, workers, agents = self.related
        execution = await self.next_queued(organization_id, queue_id)
        agent = await agents.get(organization_id, execution.agent_id) if execution and execution.agent_id else None
        queue = await queues.get(organization_id, queue_id)
        worker = await workers.get(organization_id, terms.worker_id)
        return await lease_in_steps(queue, worker, execution, agent, terms, self.record)

    async def lease_extras(self, organization_id: str, execution_id: str, environment_id: str) -> LeaseExtras:
        execution = self.rows.get(execution_id)
        mine = execution is not None and execution.organization_id == organization_id
        skills = any(
            kind == SkillOwner.ENVIRONMENT.value and owner_id == environment_id and organization == organization_id
            for (kind, owner_id, _), (organization, _, _) in self.skill_attachments.items()
        )
        return LeaseExtras(self.contexts.get(execution_id) if mine else None, skills)

    async def add_if_found(
        self, execution: Execution, events: Sequence[ExecutionEvent], context: ResolvedContext | None = None
    ) -> tuple[bool, bool, Execution]:
        queues, _, _ = self.related
        if execution.agent_id is None:
            raise ValueError("add_if_found adds an agent's execution")
        run_with = await self.run_with(execution.organization_id, execution.agent_id)
        queue_found = await queues.get(execution.organization_id, execution.worker_queue_id) is not None
        if queue_found and run_with is not None:
            execution = run_with.applied(execution)
            await self.record(None, execution, events, context=context)
        return queue_found, run_with is not None, execution

    async def run_with(self, organization_id: str, agent_id: str) -> RunWith | None:
        _, _, agents = self.related
        agent = await agents.get(organization_id, agent_id)
        if agent is None:
            return None
        return agent_run_with(agent, (m for m in self.models.values() if m.organization_id == organization_id))

    async def get(self, organization_id: str, execution_id: str, *, for_update: bool = False) -> Execution | None:
        execution = self.rows.get(execution_id)
        return execution if execution is not None and execution.organization_id == organization_id else None

    async def list_page(
        self, organization_id: str, page: PageRequest, where: ExecutionFilter
    ) -> tuple[list[Execution], int]:
        mine = (
            e
            for e in self.rows.values()
            if e.organization_id == organization_id
            and where.status in (None, e.status)
            and where.agent_id in (None, e.agent_id)
            and where.team_id in (None, e.team_id)
            and where.worker_queue_id in (None, e.worker_queue_id)
            and (where.created_from is None or e.created_at >= where.created_from)
            and (where.created_to is None or e.created_at < where.created_to)
        )
        return sorted_page(mine, lambda e: (e.created_at, e.id), page)

    async def next_queued(self, organization_id: str, queue_id: str) -> Execution | None:
        queued = [
            e
            for e in self.rows.values()
            if e.organization_id == organization_id and e.worker_queue_id == queue_id and e.status is QUEUED
        ]
        return min(queued, key=lease_order, default=None)

    async def running_for_worker(self, organization_id: str, worker_id: str) -> list[Execution]:
        return [
            e
            for e in self.rows.values()
            if e.organization_id == organization_id and e.worker_id == worker_id and e.status in HELD
        ]

    async def extend_leases(self, organization_id: str, worker_id: str, until: datetime) -> int:
        held = await self.running_for_worker(organization_id, worker_id)
        for execution in held:
            self.rows[execution.id] = replace(execution, lease_expires_at=until)
        return len(held)

    async def expired_leases(self, now: datetime, limit: int) -> list[Execution]:
        expired = [
            e
            for e in self.rows.values()
            if e.status in HELD and e.lease_expires_at is not None and e.lease_expires_at < now
        ]
        return sorted(expired, key=lambda e: (e.lease_expires_at or now, e.id))[:limit]

    async def count_queued(self, organization_id: str, queue_ids: Sequence[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for e in self.rows.values():
            if e.organization_id == organization_id and e.worker_queue_id in queue_ids and e.status is QUEUED:
                counts[e.worker_queue_id] = counts.get(e.worker_queue_id, 0) + 1
        return counts

    async def count_unfinished(self, organization_id: str, queue_id: str) -> int:
        return sum(
            1
            for e in self.rows.values()
            if e.organization_id == organization_id and e.worker_queue_id == queue_id and not e.is_terminal
        )

    async def record(
        self,
        before: Execution | None,
        after: Execution,
        events: Sequence[ExecutionEvent],
        *,
        context: ResolvedContext | None = None,
        outbox: Sequence[Event] = (),
    ) -> bool:
        if context is not None and before is not None:
            raise ValueError("a context is stored with a new execution only")
        stored = self.rows.get(after.id)
        if before is None and stored is not None:
            raise Conflict(f"execution with id '{after.id}' already exists", {"field": "id"})
        if before is not None and (
            stored is None
            or (stored.organization_id, stored.last_seq) != (before.organization_id, before.last_seq)
            or after.organization_id != before.organization_id
        ):
            return False
        await self._add_events(events)
        if before is None or stored is None:
            self.rows[after.id] = after
            if context is not None:
                self.contexts[after.id] = context
        else:  # what the change changed, over what is stored (a lease extended since the read stays extended)
            changed = {
                f.name: getattr(after, f.name)
                for f in fields(after)
                if getattr(before, f.name) != getattr(after, f.name)
            }
            self.rows[after.id] = replace(stored, **changed)
        if outbox:
            if self.webhooks is None:
                raise ValueError("a change with webhook events needs the webhooks' repository")
            for event in outbox:
                await self.webhooks.enqueue(event)
        return True

    async def _add_events(self, events: Sequence[ExecutionEvent]) -> None:
        """Logs are tuples, replaced on append, so a unit of work's copy of the tables stays cheap."""
        for event in events:
            log = self.events.get(event.execution_id, ())
            if log and log[-1].seq >= event.seq:
                raise Conflict(f"event {event.seq} of execution {event.execution_id} exists")
            self.events[event.execution_id] = (*log, event)

    async def events_after(
        self, organization_id: str, execution_id: str, after_seq: int, limit: int
    ) -> list[ExecutionEvent]:
        if await self.get(organization_id, execution_id) is None:
            return []
        log = self.events.get(execution_id, ())
        return [event for event in log if event.seq > after_seq][:limit]
