"""Ports: what the domain needs from the outside world, as Protocols.

Each area's repository Protocol lives in that area's `ports.py` (`controlplane_domain/<area>/ports.py`); this
module keeps what is shared: the unit of work (one property per area: a new area registers its repository
there), the clock, ids, credentials, health, the event bus, and `Ports`, which the use cases take."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self, TypeVar

from controlplane_domain.agents.ports import AgentRepository
from controlplane_domain.analytics.ports import AnalyticsRepository
from controlplane_domain.api_keys.ports import ApiKeyRepository
from controlplane_domain.audit.ports import AuditRepository
from controlplane_domain.context_graph.ports import ContextGraphRepository
from controlplane_domain.contexts.ports import ContextRepository
from controlplane_domain.contexts.presence import ContextPresence
from controlplane_domain.environments.ports import EnvironmentRepository, QueueRepository
from controlplane_domain.executions.ports import ExecutionOwners, ExecutionRepository
from controlplane_domain.executions.recent import RecentExecutions
from controlplane_domain.fairness import OrganizationSlots
from controlplane_domain.idempotency.ports import IdempotencyRepository
from controlplane_domain.integrations.ports import CustomIntegrationRepository, IntegrationRepository
from controlplane_domain.jobs.ports import CronCalendar, JobRepository, WebhookSignatures
from controlplane_domain.llm_models.ports import ModelRepository
from controlplane_domain.operations.ports import OperationsRepository
from controlplane_domain.organizations.ports import OrganizationRepository
from controlplane_domain.policies.ports import DecisionRepository, PolicyRepository
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.principal import Principal
from controlplane_domain.projects.ports import ProjectRepository
from controlplane_domain.secrets.ports import SecretCipher, SecretRepository
from controlplane_domain.skills.ports import SchemaValidator, SkillRepository
from controlplane_domain.storage.ports import Storage, StoredFileRepository
from controlplane_domain.task_plans.ports import TaskPlanRepository
from controlplane_domain.teams.ports import TeamRepository
from controlplane_domain.templates.ports import TemplateRepository
from controlplane_domain.webhooks.listeners import WebhookListeners
from controlplane_domain.webhooks.ports import WebhookRepository, WebhookSender
from controlplane_domain.workers.heartbeats import HeartbeatBuffer
from controlplane_domain.workers.ports import WorkerRepository
from controlplane_domain.workflows.ports import WorkflowRepository, WorkflowRunRepository

if TYPE_CHECKING:  # (references.py records forced deletes through the audit log, which needs this module)
    from controlplane_domain.references import Referrers

T = TypeVar("T")


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

    @property
    def projects(self) -> ProjectRepository: ...

    @property
    def templates(self) -> TemplateRepository: ...

    @property
    def skills(self) -> SkillRepository: ...

    @property
    def secrets(self) -> SecretRepository: ...

    @property
    def contexts(self) -> ContextRepository: ...

    @property
    def integrations(self) -> IntegrationRepository: ...

    @property
    def custom_integrations(self) -> CustomIntegrationRepository: ...

    @property
    def jobs(self) -> JobRepository: ...

    @property
    def workflows(self) -> WorkflowRepository: ...

    @property
    def workflow_runs(self) -> WorkflowRunRepository: ...

    @property
    def task_plans(self) -> TaskPlanRepository: ...

    @property
    def stored_files(self) -> StoredFileRepository: ...

    @property
    def policies(self) -> PolicyRepository: ...

    @property
    def policy_decisions(self) -> DecisionRepository: ...

    @property
    def audit_events(self) -> AuditRepository: ...

    @property
    def analytics(self) -> AnalyticsRepository: ...

    @property
    def context_graph(self) -> ContextGraphRepository: ...

    @property
    def operations(self) -> OperationsRepository: ...

    @property
    def webhooks(self) -> WebhookRepository: ...

    @property
    def referrers(self) -> Referrers:
        """Who names an object (controlplane_domain/references.py): every store's one answer to it."""

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    async def commit(self) -> None: ...

    async def commit_with(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run `write`, then commit: what the unit of work wrote before and `write` are committed together, and
        `write`'s answer is returned. `write` makes this unit of work's last write (it may read before and after
        it, and writes nothing after it). The store decides how to send it with the commit (when nothing was
        written before it, as one transaction of its own). What the unit of work does after `commit_with` reads,
        or writes in a new transaction, as after `commit()`."""


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
    """Write-behind heartbeats (see workers/heartbeats.py); None writes every heartbeat that changes something at once.
    Whoever wires a buffer must flush it (`workers.flushing.flush_heartbeats`) every half second and at exit."""
    recent: RecentExecutions | None = None
    """The executions this process last wrote: a first guess for their next change (see executions/recent.py)."""
    contexts_seen: ContextPresence | None = None
    """Which organizations have no context (contexts/presence.py): their executes skip the contexts' read. Needs the
    bus that carries `presence.CHANGED` to every node; None reads the contexts on every execute."""
    schemas: SchemaValidator | None = None
    """Checks JSON Schemas (skills' configurations): `controlplane_adapters.schemas.JsonSchemaValidator`."""
    secrets_cipher: SecretCipher | None = None
    """Seals and opens secret values; None when no key is configured (value writes are 503 SECRETS_KEY_MISSING)."""
    cron: CronCalendar | None = None
    """Cron expressions and time zones (jobs): `controlplane_adapters.jobs.cron.CronsimCalendar`."""
    signatures: WebhookSignatures | None = None
    """Standard Webhooks secrets and signatures of webhook-triggered jobs (`jobs.trigger_signatures`)."""
    storage: Storage | None = None
    """Files' bytes (a local directory or S3) and the default quota; None: the storage routes answer 503."""
    policies: PolicyRuntime | None = None
    """The policies' engine, cache and decision log (policies/runtime.py); None evaluates no policy (an embedder's
    choice: the service always wires one) and refuses to store one (503)."""
    webhook_sender: WebhookSender | None = None
    """Checks webhooks' addresses and sends their deliveries: `controlplane_adapters.webhooks.sender.HttpSender`."""
    webhook_listeners: WebhookListeners | None = None
    """Which event types each organization's webhooks listen to (webhooks/listeners.py): an event nobody listens to
    is not written. Needs the bus that carries `listeners.CHANGED` to every node; None tries every event's insert."""
    owners: ExecutionOwners | None = None
    """What executions work for (executions/ports.py): `controlplane_domain.owners.OWNERS`, workflow runs' steps and
    task plans' planning. None: an execution of a workflow run or a task plan cannot be leased or end (RuntimeError);
    every other works."""
    advance_slots: OrganizationSlots | None = None
    """The per-organization cap on workflow advances that a request starts (a run started, cancelled, fired by a
    job's trigger or webhook, a task plan run or cancelled): fairness.py. None: no cap."""

    def advancing(self, organization_id: str) -> AbstractAsyncContextManager[None]:
        """A slot of the organization's for one unit of work that advances workflow runs (`advance_slots`)."""
        return self.advance_slots.slot(organization_id) if self.advance_slots is not None else nullcontext()

    def read(self) -> UnitOfWork:
        """A unit of work for reading only (it takes no write lock); `uow` when no reader is wired."""
        return (self.reader or self.uow)()


def wired(port: T | None, missing: str) -> T:
    """The port, or RuntimeError(`missing`): the server was put together without it (a wiring mistake)."""
    if port is None:
        raise RuntimeError(missing)
    return port
