"""Ports: what the domain needs from the outside world, as Protocols."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Protocol, Self

from controlplane_domain.agents.entity import Agent
from controlplane_domain.api_keys.entity import ApiKey
from controlplane_domain.environments.entity import Environment, WorkerQueue
from controlplane_domain.executions.entity import Execution, ExecutionEvent, ExecutionStatus, LeaseTerms
from controlplane_domain.executions.recent import RecentExecutions
from controlplane_domain.idempotency.entity import IdempotencyRecord
from controlplane_domain.llm_models.entity import LlmModel
from controlplane_domain.organizations.entity import OrganizationSettings
from controlplane_domain.paging import PageRequest
from controlplane_domain.principal import Principal
from controlplane_domain.teams.entity import Team
from controlplane_domain.workers.entity import Worker
from controlplane_domain.workers.heartbeats import HeartbeatBuffer


class AgentRepository(Protocol):
    async def add(self, agent: Agent, *, alone: bool = False) -> None:
        """Store a new agent; Conflict when its name is taken in the organization. `alone`: the unit of work
        writes nothing else, so the store may make the agent durable at once (Postgres: one statement, its own
        transaction, like `ExecutionRepository.record`); nothing may be written after it."""

    async def get(self, organization_id: str, agent_id: str, *, for_update: bool = False) -> Agent | None:
        """With `for_update`, the row stays locked until the unit of work ends (Postgres; the other stores
        serialize writers): a change read this way cannot be lost to, or outlive, a concurrent one. The same
        holds for every repository's `get(..., for_update=True)`."""

    async def get_many(self, organization_id: str, agent_ids: Sequence[str]) -> list[Agent]: ...

    async def update(self, agent: Agent) -> None:
        """Replace a stored agent; Conflict when its new name is taken."""

    async def delete(self, organization_id: str, agent_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Agent], int]: ...

    async def list_by_teams(self, organization_id: str, team_ids: Sequence[str]) -> list[Agent]:
        """Members of the given teams, ordered by (created_at, id)."""

    async def set_team(
        self,
        organization_id: str,
        agent_ids: Sequence[str],
        team_id: str | None,
        now: datetime,
        *,
        only_from: str | None = None,
    ) -> None:
        """Point the given agents at `team_id` (None removes them from any team). `only_from`: only those still in
        that team once their rows are locked (a removal never undoes a concurrent move to another team)."""


class TeamRepository(Protocol):
    async def add(self, team: Team) -> None: ...

    async def get(self, organization_id: str, team_id: str, *, for_update: bool = False) -> Team | None: ...

    async def update(self, team: Team) -> None: ...

    async def delete(self, organization_id: str, team_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Team], int]: ...

    async def set_member(
        self, organization_id: str, team_id: str, agent_id: str, member: bool, now: datetime
    ) -> tuple[Team | None, bool]:
        """Move the agent into the team (`member`) or out of it to no team, unless it is there already (the team's
        `updated_at`, the agent's `team_id` and `updated_at` set to `now`): the team as it is after (None: no such
        team) and whether the agent exists; nothing is written unless both do. The team's row is locked before the
        agent's, as every membership change locks them. Like `ExecutionRepository.record`, as the unit of work's
        first write it may be durable at once and end what the unit of work writes (Postgres: one statement)."""


class WorkerRepository(Protocol):
    async def get(self, organization_id: str, worker_id: str) -> Worker | None: ...

    async def register(self, worker: Worker) -> bool:
        """Insert the worker unless its id is taken in the organization; True when this call inserted it (of two
        concurrent first heartbeats, exactly one)."""

    async def save(self, worker: Worker) -> None:
        """Insert or replace the worker (keyed by organization and worker id); a stored worker keeps its
        registered_at and its queue (which only `move_to_queue` changes: a report's queue may be read before a
        concurrent lease moved the worker)."""

    async def save_reports(self, workers: Sequence[Worker]) -> None:
        """Insert or replace each worker, except where the stored one heartbeated later (written by another
        process meanwhile); registered_at and the queue keep their stored values, as with `save`."""

    async def move_to_queue(self, organization_id: str, worker_id: str, queue_id: str) -> None:
        """The worker polls this queue now (a lease): its queue, and nothing else, changes."""

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Worker], int]: ...

    async def count_active(self, organization_id: str, queue_ids: Sequence[str], since: datetime) -> dict[str, int]:
        """Workers per queue whose last heartbeat is at or after `since`."""


class ModelRepository(Protocol):
    async def add(self, model: LlmModel) -> None: ...

    async def get(self, organization_id: str, model_id: str, *, for_update: bool = False) -> LlmModel | None: ...

    async def update(self, model: LlmModel) -> None: ...

    async def delete(self, organization_id: str, model_id: str) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, *, enabled_only: bool = False
    ) -> tuple[list[LlmModel], int]: ...


class ApiKeyRepository(Protocol):
    async def add(self, key: ApiKey) -> None: ...

    async def get(self, organization_id: str, key_id: str, *, for_update: bool = False) -> ApiKey | None: ...

    async def find_for_authentication(self, key_id: str) -> ApiKey | None:
        """Operator lookup across organizations: the key a presented credential names."""

    async def update(self, key: ApiKey) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]: ...


class OrganizationRepository(Protocol):
    async def get_settings(self, organization_id: str) -> OrganizationSettings | None: ...

    async def save_settings(self, settings: OrganizationSettings) -> None: ...


class IdempotencyRepository(Protocol):
    async def get(self, organization_id: str, key: str) -> IdempotencyRecord | None: ...

    async def add(self, record: IdempotencyRecord) -> None:
        """Store a new record; Conflict when one exists for the key (a concurrent first request)."""

    async def save(self, record: IdempotencyRecord) -> None:
        """Replace the record for (organization, key)."""

    async def delete(self, organization_id: str, key: str) -> None: ...

    async def delete_expired(self, now: datetime, limit: int) -> int:
        """Delete up to `limit` records whose `expires_at` is `now` or before; how many were deleted."""


class EnvironmentRepository(Protocol):
    async def add(self, environment: Environment) -> None: ...

    async def get(
        self, organization_id: str, environment_id: str, *, for_update: bool = False
    ) -> Environment | None: ...

    async def update(self, environment: Environment) -> None: ...

    async def delete(self, organization_id: str, environment_id: str) -> None: ...

    async def list_page(self, organization_id: str, page: PageRequest) -> tuple[list[Environment], int]: ...


class QueueRepository(Protocol):
    async def add(self, queue: WorkerQueue) -> None: ...

    async def get(self, organization_id: str, queue_id: str, *, for_update: bool = False) -> WorkerQueue | None: ...

    async def update(self, queue: WorkerQueue) -> None: ...

    async def delete(self, organization_id: str, queue_id: str) -> None: ...

    async def list_page(
        self, organization_id: str, page: PageRequest, *, environment_id: str | None = None
    ) -> tuple[list[WorkerQueue], int]: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionFilter:
    status: ExecutionStatus | None = None
    agent_id: str | None = None
    team_id: str | None = None
    worker_queue_id: str | None = None


@dataclass(frozen=True, slots=True)
class Leased:
    """What a lease found and did: the queue, the worker as stored, the execution as leased (None: nothing was
    leased) and its agent."""

    queue: WorkerQueue | None
    worker: Worker | None
    execution: Execution | None
    agent: Agent | None


class ExecutionRepository(Protocol):
    async def get(self, organization_id: str, execution_id: str, *, for_update: bool = False) -> Execution | None:
        """With `for_update`, the row stays locked until the transaction ends (Postgres)."""

    async def list_page(
        self, organization_id: str, page: PageRequest, where: ExecutionFilter
    ) -> tuple[list[Execution], int]: ...

    async def lease_next(self, organization_id: str, queue_id: str, terms: LeaseTerms) -> Leased:
        """Lease the oldest queued execution of the queue, if the queue exists and is active, as
        `executions.leased` decides: the change and its event are one atomic write, like `record` (and like it,
        as the unit of work's first write, may be durable at once and end what the unit of work writes).
        Executions another lease is taking are skipped (Postgres: `FOR UPDATE SKIP LOCKED`), never leased twice.
        Reads the worker and the execution's agent with it (one statement on Postgres)."""

    async def running_for_worker(self, organization_id: str, worker_id: str) -> list[Execution]: ...

    async def extend_leases(self, organization_id: str, worker_id: str, until: datetime) -> int:
        """Move the lease expiry of every execution the worker holds (one targeted update, no lost updates)."""

    async def expired_leases(self, now: datetime, limit: int) -> list[Execution]:
        """Operator query across organizations: running executions whose lease has expired."""

    async def count_queued(self, organization_id: str, queue_ids: Sequence[str]) -> dict[str, int]: ...

    async def count_unfinished(self, organization_id: str, queue_id: str) -> int:
        """The queue's queued and running executions, once every write of an execution in flight has committed;
        none can be added until the unit of work ends (Postgres: a SHARE lock on the table; the other stores
        serialize writers), so that a queue deleted on a count of 0 never ends up holding one."""

    async def record(self, before: Execution | None, after: Execution, events: Sequence[ExecutionEvent]) -> bool:
        """Store a change of one execution with the events that tell it, as one atomic write: `after` is added
        when `before` is None; otherwise it replaces `before` only if the stored execution is still at
        `before.last_seq` (compare-and-set: every change of an execution appends events). False, with nothing
        written, when another writer changed it first.

        As the first write of its unit of work (no write or locking read before it), a store may make it durable
        at once, before `commit()` (Postgres runs it as a transaction of its own, without the BEGIN and COMMIT
        round trips); the unit of work then writes nothing more. Otherwise it joins the unit of work's
        transaction like any write."""

    async def add_if_found(self, execution: Execution, events: Sequence[ExecutionEvent]) -> tuple[bool, bool]:
        """Add an agent's new execution with its events, as `record(None, ...)` does, only if its worker queue and
        its agent exist in its organization; answers (queue found, agent found). One statement on Postgres (an
        execute's reads and its write); like `record`, it may be durable at once."""

    async def events_after(
        self, organization_id: str, execution_id: str, after_seq: int, limit: int
    ) -> list[ExecutionEvent]: ...


class Subscription(Protocol):
    async def wait(self, seconds: float) -> bool:
        """True when the topic was published since the last wait (or since subscribing)."""

    def take(self) -> bool:
        """True (once) when the topic was published since the last wait or take; never blocks."""

    def close(self) -> None: ...


class EventBus(Protocol):
    """Wakes waiters (long polls, streams) when something they watch changed; carries no data."""

    async def publish(self, *topics: str) -> None:
        """Wake the waiters of each topic (several at once cost one message to other nodes)."""
        ...

    def subscribe(self, topic: str) -> Subscription: ...


class UnitOfWork(Protocol):
    """Owns one transaction: leaving the block without `commit()` rolls back."""

    @property
    def agents(self) -> AgentRepository: ...

    @property
    def teams(self) -> TeamRepository: ...

    @property
    def workers(self) -> WorkerRepository: ...

    @property
    def models(self) -> ModelRepository: ...

    @property
    def api_keys(self) -> ApiKeyRepository: ...

    @property
    def organizations(self) -> OrganizationRepository: ...

    @property
    def idempotency(self) -> IdempotencyRepository: ...

    @property
    def environments(self) -> EnvironmentRepository: ...

    @property
    def queues(self) -> QueueRepository: ...

    @property
    def executions(self) -> ExecutionRepository: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    async def commit(self) -> None: ...


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""


class IdGenerator(Protocol):
    def new_id(self) -> str: ...


class SecretHasher(Protocol):
    def hash(self, secret: str) -> str: ...

    def verify(self, secret: str, hashed: str) -> bool: ...

    def new_secret(self) -> str: ...

    def new_key_id(self) -> str:
        """A lowercase hex identifier."""


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> Principal:
        """The principal a credential stands for; Unauthenticated otherwise."""


class HealthProbe(Protocol):
    async def database_ok(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Ports:
    """Everything a use case may need, wired once by the application factory."""

    uow: Callable[[], UnitOfWork]
    clock: Clock
    ids: IdGenerator
    worker_heartbeat_interval_seconds: int = 30
    bus: EventBus | None = None
    lease_timeout_seconds: int = 60
    max_attempts: int = 3
    reader: Callable[[], UnitOfWork] | None = None
    heartbeats: HeartbeatBuffer | None = None
    """Write-behind heartbeats (see heartbeats.py); None writes every heartbeat that changes something at once.
    Whoever wires a buffer must flush it (`usecases.workers.flush_heartbeats`) every half second and at exit."""
    recent: RecentExecutions | None = None
    """The executions this process last wrote: a first guess for their next change (see recent.py)."""

    def read(self) -> UnitOfWork:
        """A unit of work for reading only (it takes no write lock); `uow` when no reader is wired."""
        return (self.reader or self.uow)()
