"""In-memory repositories over plain dicts, scoped by organization like the SQL ones."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from controlplane_domain.agents.entity import Agent
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.errors import Conflict
from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus, LeaseTerms
from controlplane_domain.executions.leases import lease_in_steps
from controlplane_domain.executions.ports import ExecutionFilter, Leased
from controlplane_domain.idempotency.entity import IdempotencyRecord
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.organizations.entity import OrganizationSettings
from controlplane_domain.paging import PageRequest
from controlplane_domain.teams.entity import Team
from controlplane_domain.teams.usecases import set_member_in_steps
from controlplane_domain.workers.entity import Worker

T = TypeVar("T")
QUEUED = ExecutionStatus.QUEUED
HELD = frozenset({ExecutionStatus.RUNNING, ExecutionStatus.WAITING_FOR_INPUT})


def _page(items: Iterable[T], key: Callable[[T], tuple[datetime, str]], page: PageRequest) -> tuple[list[T], int]:
    ordered = sorted(items, key=key)
    return ordered[page.offset : page.offset + page.limit], len(ordered)


class _Keyed(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def organization_id(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


K = TypeVar("K", bound=_Keyed)


class _Named(Generic[K]):
    """Add, get, update, delete and page objects whose `unique_field` is unique in their scope."""

    noun = "object"
    unique_field = "name"

    def __init__(self, rows: dict[str, K]) -> None:
        self.rows = rows

    def _same_scope(self, a: K, b: K) -> bool:
        return True

    def _check_unique(self, obj: K) -> None:
        value = getattr(obj, self.unique_field)
        for other in self.rows.values():
            if (
                other.organization_id == obj.organization_id
                and getattr(other, self.unique_field) == value
                and other.id != obj.id
                and self._same_scope(other, obj)
            ):
                field = self.unique_field
                raise Conflict(f"{self.noun} with {field} '{value}' already exists", {"field": field})

    async def add(self, obj: K) -> None:
        self._check_unique(obj)
        self.rows[obj.id] = obj

    async def get(self, organization_id: str, object_id: str, *, for_update: bool = False) -> K | None:
        obj = self.rows.get(object_id)
        return obj if obj is not None and obj.organization_id == organization_id else None

    async def update(self, obj: K) -> None:
        self._check_unique(obj)
        self.rows[obj.id] = obj

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            del self.rows[object_id]

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[K], int]:
        mine = (obj for obj in self.rows.values() if obj.organization_id == organization_id)
        return _page(mine, lambda obj: (obj.created_at, obj.id), page)


class MemoryAgentRepository(_Named[Agent]):
    noun = "agent"

    async def add(self, obj: Agent, *, alone: bool = False) -> None:
        await super().add(obj)  # a memory unit of work is published on commit, alone or not

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]:
        found = [self.rows.get(agent_id) for agent_id in agent_ids]
        return [agent for agent in found if agent is not None and agent.organization_id == organization_id]

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        wanted = set(team_ids)
        members = [
            agent
            for agent in self.rows.values()
            if agent.organization_id == organization_id and agent.team_id is not None and agent.team_id in wanted
        ]
        return sorted(members, key=lambda agent: (agent.created_at, agent.id))

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        for agent in await self.get_many(organization_id, agent_ids):
            if only_from is None or agent.team_id == only_from:
                self.rows[agent.id] = replace(agent, team_id=team_id, updated_at=now)


class MemoryTeamRepository(_Named[Team]):
    noun = "team"

    def __init__(self, rows: dict[str, Team], agents: MemoryAgentRepository) -> None:
        super().__init__(rows)
        self.agents = agents  # what a membership change writes besides the team

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        return await set_member_in_steps(self, self.agents, organization_id, team_id, agent_id, member, now)


class MemoryWorkerRepository:
    def __init__(self, rows: dict[tuple[str, str], Worker]) -> None:
        self.rows = rows

    async def get(self, organization_id: str, worker_id: str) -> Worker | None:
        return self.rows.get((organization_id, worker_id))

    async def register(self, worker: Worker) -> bool:
        if (worker.organization_id, worker.worker_id) in self.rows:
            return False
        await self.save(worker)
        return True

    async def save(self, worker: Worker) -> None:
        key = (worker.organization_id, worker.worker_id)
        stored = self.rows.get(key)
        if stored is not None:
            worker = replace(worker, registered_at=stored.registered_at, queue_id=stored.queue_id)
        self.rows[key] = worker

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        for worker in workers:
            stored = self.rows.get((worker.organization_id, worker.worker_id))
            if stored is None or stored.last_heartbeat_at <= worker.last_heartbeat_at:
                await self.save(worker)

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        stored = self.rows.get((organization_id, worker_id))
        if stored is not None:
            self.rows[(organization_id, worker_id)] = replace(stored, queue_id=queue_id)

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]:
        mine = (worker for (org, _), worker in self.rows.items() if org == organization_id)
        return _page(mine, lambda worker: (worker.registered_at, worker.worker_id), page)

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        counts: dict[str, int] = {}
        for (org, _), worker in self.rows.items():
            if org == organization_id and worker.queue_id in queue_ids and worker.last_heartbeat_at >= since:
                queue_id = worker.queue_id or ""
                counts[queue_id] = counts.get(queue_id, 0) + 1
        return counts


class MemoryModelRepository(_Named[LlmModel]):
    noun = "model"
    unique_field = "value"

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]:
        mine = (
            model
            for model in self.rows.values()
            if model.organization_id == organization_id and (model.enabled or not enabled_only)
        )
        return _page(mine, lambda model: (model.created_at, model.id), page)


class MemoryApiKeyRepository:
    def __init__(self, rows: dict[str, ApiKey]) -> None:
        self.rows = rows

    async def add(self, key: ApiKey) -> None:
        if key.id in self.rows:
            raise Conflict("api key id collision")
        self.rows[key.id] = key

    async def get(self, organization_id: str, key_id: str, *, for_update: bool = False) -> ApiKey | None:
        key = self.rows.get(key_id)
        return key if key is not None and key.organization_id == organization_id else None

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        return self.rows.get(key_id)

    async def update(self, key: ApiKey) -> None:
        self.rows[key.id] = key

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]:
        mine = (key for key in self.rows.values() if key.organization_id == organization_id)
        return _page(mine, lambda key: (key.created_at, key.id), page)


class MemoryOrganizationRepository:
    def __init__(self, rows: dict[str, OrganizationSettings]) -> None:
        self.rows = rows

    async def get_settings(self, organization_id: str) -> OrganizationSettings | None:
        return self.rows.get(organization_id)

    async def save_settings(self, settings: OrganizationSettings) -> None:
        self.rows[settings.organization_id] = settings


class MemoryIdempotencyRepository:
    def __init__(self, rows: dict[tuple[str, str], IdempotencyRecord]) -> None:
        self.rows = rows

    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None:
        return self.rows.get((organization_id, key))

    async def add(self, record: IdempotencyRecord) -> None:
        if (record.organization_id, record.key) in self.rows:
            raise Conflict("idempotency key in use")
        self.rows[(record.organization_id, record.key)] = record

    async def save(self, record: IdempotencyRecord) -> None:
        self.rows[(record.organization_id, record.key)] = record

    async def delete(self, organization_id: str, key: str) -> None:
        self.rows.pop((organization_id, key), None)

    async def delete_expired(self, now: datetime, limit: int) -> int:
        expired = [where for where, record in self.rows.items() if record.expires_at <= now][:limit]
        for where in expired:
            del self.rows[where]
        return len(expired)


class MemoryEnvironmentRepository(_Named[Environment]):
    noun = "environment"


class MemoryQueueRepository(_Named[WorkerQueue]):
    noun = "worker queue"

    def _same_scope(self, a: WorkerQueue, b: WorkerQueue) -> bool:
        return a.environment_id == b.environment_id

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]:
        mine = (
            queue
            for queue in self.rows.values()
            if queue.organization_id == organization_id and environment_id in (None, queue.environment_id)
        )
        return _page(mine, lambda queue: (queue.created_at, queue.id), page)


class MemoryExecutionRepository:
    def __init__(
        self,
        rows: dict[str, Execution],
        events: dict[str, tuple[ExecutionEvent, ...]],
        related: tuple[MemoryQueueRepository, MemoryWorkerRepository, MemoryAgentRepository],
    ) -> None:
        self.rows = rows
        self.events = events
        self.related = related  # what a lease candidate is read with

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        queues, workers, agents = self.related
        execution = await self.next_queued(organization_id, queue_id)
        agent = await agents.get(organization_id, execution.agent_id) if execution and execution.agent_id else None
        queue = await queues.get(organization_id, queue_id)
        worker = await workers.get(organization_id, terms.worker_id)
        return await lease_in_steps(queue, worker, execution, agent, terms, self.record)

    async def add_if_found(self, execution: Execution, events: Sequence[ExecutionEvent]) -> tuple[bool, bool]:
        queues, _, agents = self.related
        if execution.agent_id is None:
            raise ValueError("add_if_found adds an agent's execution")
        found = (
            await queues.get(execution.organization_id, execution.worker_queue_id) is not None,
            await agents.get(execution.organization_id, execution.agent_id) is not None,
        )
        if all(found):
            await self.record(None, execution, events)
        return found

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
        )
        return _page(mine, lambda e: (e.created_at, e.id), page)

    async def next_queued(self, organization_id: str, queue_id: str) -> Execution | None:
        queued = [
            e
            for e in self.rows.values()
            if e.organization_id == organization_id and e.worker_queue_id == queue_id and e.status is QUEUED
        ]
        return min(queued, key=lambda e: (e.queued_at or e.created_at, e.id), default=None)

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

    async def record(self, before: Execution | None, after: Execution, events: Sequence[ExecutionEvent]) -> bool:
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
        else:  # what the change changed, over what is stored (a lease extended since the read stays extended)
            changed = {
                f.name: getattr(after, f.name)
                for f in fields(after)
                if getattr(before, f.name) != getattr(after, f.name)
            }
            self.rows[after.id] = replace(stored, **changed)
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
