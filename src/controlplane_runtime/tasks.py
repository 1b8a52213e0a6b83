"""The server's background tasks, built from its settings, in the order they start and stop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from controlplane_adapters.settings.model import MEMORY_URL, Settings
from controlplane_adapters.sql.engine import is_sqlite
from controlplane_domain.ports import Ports
from controlplane_domain.webhooks.delivery import OnAttempt
from controlplane_domain.workers.flushing import FLUSH_BATCH
from controlplane_runtime.periodic import (
    Periodic,
    decision_flusher,
    heartbeat_flusher,
    idempotency_purger,
    job_scheduler,
    lease_reaper,
    step_timeouts,
)
from controlplane_runtime.webhook_dispatcher import WebhookDispatcher

Hook = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class BackgroundTasks:
    """Every periodic task and the webhook dispatcher of one server process."""

    reaper: Periodic
    heartbeats: Periodic
    purger: Periodic
    scheduler: Periodic
    timeouts: Periodic
    decisions: Periodic
    dispatcher: WebhookDispatcher
    deliver: bool
    """Whether this process sends webhook deliveries (`webhooks_deliver`)."""

    @property
    def starts(self) -> list[Hook]:
        periodic = [self.reaper, self.heartbeats, self.purger, self.scheduler, self.timeouts, self.decisions]
        hooks: list[Hook] = [task.start for task in periodic]
        return hooks + ([self.dispatcher.start] if self.deliver else [])

    @property
    def stops(self) -> list[Hook]:
        """The flushers stop last: each writes what waits once more as it stops."""
        hooks: list[Hook] = [task.stop for task in (self.reaper, self.purger, self.scheduler, self.timeouts)]
        return [*hooks, self.dispatcher.stop, self.heartbeats.stop, self.decisions.stop]


def flush_batch(database_url: str) -> int | None:
    """The heartbeat flush's batch on this store: the memory store and SQLite write in the event loop's thread, so
    a large flush goes in batches with requests in between; Postgres's writes wait on the network: one transaction."""
    return FLUSH_BATCH if database_url == MEMORY_URL or is_sqlite(database_url) else None


def background_tasks(ports: Ports, settings: Settings, *, on_attempt: OnAttempt | None = None) -> BackgroundTasks:
    """The tasks `settings` asks for, on `ports`; `on_attempt` sees each webhook delivery's attempt (metrics)."""
    scheduler_seconds = settings.scheduler_interval_ms / 1000
    return BackgroundTasks(
        reaper=lease_reaper(ports, interval_seconds=max(0.2, min(5.0, settings.lease_timeout_seconds / 4))),
        heartbeats=heartbeat_flusher(ports, settings.heartbeat_flush_ms / 1000, flush_batch(settings.database_url)),
        purger=idempotency_purger(ports),
        scheduler=job_scheduler(ports, scheduler_seconds),
        timeouts=step_timeouts(ports, scheduler_seconds),
        decisions=decision_flusher(ports),
        dispatcher=WebhookDispatcher(
            ports,
            interval_seconds=scheduler_seconds,
            on_attempt=on_attempt,
            slots=settings.webhooks_concurrency,
            per_organization=settings.webhooks_organization_concurrency,
        ),
        deliver=settings.webhooks_deliver,
    )
