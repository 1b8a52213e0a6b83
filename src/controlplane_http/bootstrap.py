"""Wire real adapters from settings: the store (SQL migrated on start, or memory), verifiers, rate limits."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

from litestar import Litestar

from controlplane_adapters.auth import CredentialVerifier, ServiceKeyVerifier, Sha256SecretHasher, StoredKeyVerifier
from controlplane_adapters.clock import SystemClock, UuidGenerator
from controlplane_adapters.jobs.cron import CronsimCalendar
from controlplane_adapters.jobs.trigger_signatures import StandardWebhooks
from controlplane_adapters.memory.tail import EventTail
from controlplane_adapters.operations import request_counts
from controlplane_adapters.policies.limits import SandboxLimits
from controlplane_adapters.policies.sandbox import SandboxedPolicyEngine
from controlplane_adapters.ratelimit import RateLimiter
from controlplane_adapters.schemas import JsonSchemaValidator
from controlplane_adapters.secrets.keys import load_cipher
from controlplane_adapters.settings.model import MEMORY_URL, Settings
from controlplane_adapters.sql.rendered import sqlite_can_render
from controlplane_adapters.storage.wiring import build_storage
from controlplane_adapters.webhooks.sender import HttpSender, Resolver
from controlplane_domain.contexts.presence import ContextPresence
from controlplane_domain.executions.queries import EVENTS_PAGE, read_events_after
from controlplane_domain.executions.recent import RecentExecutions
from controlplane_domain.fairness import OrganizationSlots
from controlplane_domain.owners import OWNERS
from controlplane_domain.policies.ports import PolicyEngine
from controlplane_domain.policies.runtime import PolicyRuntime
from controlplane_domain.ports import Clock, Ports
from controlplane_domain.webhooks.delivery import Attempted
from controlplane_domain.webhooks.listeners import WebhookListeners
from controlplane_domain.workers.heartbeats import HeartbeatBuffer
from controlplane_http.app import create_app
from controlplane_http.executions.streaming import StreamOptions
from controlplane_http.limits import LimitPolicy
from controlplane_http.stopping import Stopping
from controlplane_http.stores import Hook, memory_store, run_async, sql_store
from controlplane_runtime.periodic import Periodic
from controlplane_runtime.tasks import background_tasks

log = logging.getLogger("controlplane")


GC_YOUNG_THRESHOLD = 10_000


def freeze_heap() -> None:
    """Move everything alive after start-up (modules, the app, the schema) out of the collector's sight.

    Python's full collections walk every tracked object; with SQLAlchemy and Litestar loaded that is hundreds of
    thousands of long-lived objects, and the pauses showed up as the p99 of every benchmark.

    The youngest generation is also collected every 10,000 net allocations instead of 700: a request in flight
    (a thousand open streams, each awaiting) survived the frequent young collections, was promoted, and made the
    full collections both frequent and long (see docs/benchmarks.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 10)


SHUTDOWN_STEP_SECONDS = 5.0


def _bounded(hook: Hook) -> Hook:
    """`hook`, given SHUTDOWN_STEP_SECONDS: a stop must end even when the database stops answering (a connection
    closed politely waits for the server's reply), or the process would wait for SIGKILL."""

    async def bounded() -> None:
        try:
            await asyncio.wait_for(hook(), SHUTDOWN_STEP_SECONDS)
        except TimeoutError:
            log.error("stopping: %s did not finish within %.0f s; going on", _name(hook), SHUTDOWN_STEP_SECONDS)

    return bounded


def _name(hook: Hook) -> str:
    owner = getattr(hook, "__self__", None)
    label = getattr(owner, "name", None) or (type(owner).__name__ if owner is not None else None)
    return f"{label}.{hook.__name__}" if label else hook.__name__


def build_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    freeze_after_start: bool = False,
    stop_on_signals: bool = False,
    tracer_provider: Any = None,
    webhook_resolver: Resolver | None = None,
    policy_engine: PolicyEngine | None = None,
) -> Litestar:
    """The app on the store `settings.database_url` names: SQL (migrated on start unless told not to) or `memory://`.

    `freeze_after_start` (the server does; tests and embedders need not) freezes the heap once started.
    `stop_on_signals` (the server does): SIGINT and SIGTERM end long polls and event streams at once (see
    stopping.py), before the ASGI server's own handler waits for them; embedders can call
    `app.state["stream_options"].stopping.stop()` from their own. `tracer_provider` (an OpenTelemetry
    `TracerProvider`) traces requests and executions; by default one exporting over OTLP when `settings.tracing`.
    `webhook_resolver`: the webhooks sender's DNS (tests; the system's resolver by default).
    `policy_engine`: by default the policy processes of `settings.policies` (sandbox.py), started when first needed
    and stopped with the app; an engine given here is its giver's to stop."""
    if not settings.auth.required:
        log.warning(
            "AUTHENTICATION IS OFF (SERVICE_AUTH_REQUIRED=false): anonymous requests act as admin of organization %r."
            " Never run like this outside development.",
            settings.default_organization,
        )
    store = memory_store() if settings.database_url == MEMORY_URL else sql_store(settings)
    storage, storage_shutdown = build_storage(settings)
    policy_stop: list[Hook] = []
    if policy_engine is None:
        sandboxed = SandboxedPolicyEngine(
            SandboxLimits(
                processes=settings.policies.processes,
                evaluation_timeout_ms=settings.policies.evaluation_timeout_ms,
                compile_timeout_ms=settings.policies.compile_timeout_ms,
                memory_mb=settings.policies.memory_mb,
            )
        )
        policy_engine, policy_stop = sandboxed, [sandboxed.stop]
    ports = Ports(
        uow=store.uow,
        clock=clock or SystemClock(),
        ids=UuidGenerator(),
        worker_heartbeat_interval_seconds=settings.worker_heartbeat_interval_seconds,
        bus=store.bus,
        reader=store.reader,
        lease_timeout_seconds=settings.lease_timeout_seconds,
        max_attempts=settings.max_attempts,
        heartbeats=HeartbeatBuffer(),
        recent=RecentExecutions(),
        schemas=JsonSchemaValidator(),
        secrets_cipher=load_cipher(settings),
        contexts_seen=ContextPresence(store.bus),
        cron=CronsimCalendar(),
        signatures=StandardWebhooks(),
        storage=storage,
        policies=PolicyRuntime(policy_engine, store.bus),
        webhook_sender=HttpSender(
            allow_private=settings.webhooks_allow_private,
            timeout_seconds=settings.webhooks_timeout_seconds,
            resolve=webhook_resolver,
        ),
        webhook_listeners=WebhookListeners(store.bus),
        owners=OWNERS,
        advance_slots=OrganizationSlots(settings.workflows_organization_concurrency),
    )
    stopping = Stopping()
    tasks = background_tasks(ports, settings, on_attempt=_count_webhook_attempt)
    if tracer_provider is None and settings.tracing:
        from controlplane_adapters.operations.tracing import otlp_provider

        tracer_provider = otlp_provider(dict(settings.otlp_headers))
    operations_start, operations_stop = _operations_hooks(tracer_provider)
    hasher = Sha256SecretHasher()
    verifier = CredentialVerifier(
        settings.auth,
        ServiceKeyVerifier(settings.service_api_key, settings.default_organization),
        StoredKeyVerifier(ports, hasher),
    )
    policy = LimitPolicy(
        ports=ports,
        hasher=hasher,
        standard_per_minute=settings.rate_limit_per_minute,
        worker_per_minute=settings.worker_rate_limit_per_minute,
        anonymous_per_minute=settings.rate_limit_per_minute,
        webhook_per_minute=settings.webhook_rate_limit_per_minute,
        service_per_minute=settings.service_rate_limit_per_minute,
    )
    app = create_app(
        ports=ports,
        verifier=verifier,
        health_probe=store.probe,
        auth=settings.auth,
        policy=policy,
        limiter=RateLimiter(
            settings.redis_url, settings.redis_namespace, redis_timeout=settings.redis_timeout_ms / 1000
        ),
        default_organization=settings.default_organization,
        max_body_bytes=settings.max_body_bytes,
        trusted_proxies=settings.trusted_proxies,
        fast_lane=settings.fast_lane,
        stream_options=StreamOptions(
            stopping=stopping,
            keepalive_seconds=settings.sse_keepalive_seconds,
            tail=EventTail(
                lambda org, execution, seq: read_events_after(ports, org, execution, seq),
                bus=store.bus,
                page=EVENTS_PAGE,
            ),
        ),
        backend=store.backend,
        # SQLite and Postgres render list pages themselves (controlplane_adapters/sql/rendered.py)
        rendered_pages=store.backend == "postgresql" or (store.backend == "sqlite" and sqlite_can_render()),
        on_startup=[
            *store.startup,
            *tasks.starts,
            *operations_start,
            *([freeze_heap] if freeze_after_start else []),
            *([stopping.watch_signals] if stop_on_signals else []),
        ],
        on_shutdown=[
            run_async(stopping.stop),
            *map(
                _bounded,
                [
                    *tasks.stops,
                    *policy_stop,
                    *store.shutdown,
                    *storage_shutdown,
                ],
            ),
            *map(_bounded, operations_stop),
        ],
        metrics_token=settings.metrics_token,
        tracer_provider=tracer_provider,
        public_url=settings.public_base_url,
    )
    app.state["webhook_dispatcher"] = tasks.dispatcher  # (its `on_attempt` is the metrics' hook)
    return app


def _operations_hooks(tracer_provider: Any) -> tuple[list[Hook], list[Hook]]:
    """In multiprocess mode (`serve --workers N`), the request counts flushed to this process's metrics files every
    second and at stop; the spans waiting for export sent at stop."""
    start: list[Hook] = []
    stop: list[Hook] = []
    if request_counts.multiprocess_mode():
        from controlplane_adapters.operations import metrics  # (prometheus-client: see request_counts.py)

        stats = request_counts.STATS
        flusher = Periodic("metrics flush", request_counts.FLUSH_SECONDS, run_async(stats.flush), at_start=False)
        start.append(flusher.start)
        stop += [flusher.stop, run_async(metrics.mark_process_dead)]
    if tracer_provider is not None:
        stop.append(lambda: asyncio.to_thread(tracer_provider.shutdown))
    return start, stop


def _count_webhook_attempt(attempted: Attempted) -> None:
    """The webhook deliveries' metrics: each attempt, delivered or failed (with why: docs/operations.md)."""
    from controlplane_adapters.operations import metrics  # (prometheus-client: loaded by the first delivery)

    outcome = attempted.outcome
    if outcome.succeeded:
        metrics.record_webhook_delivery(True)
        return
    error = (outcome.error or "").lower()
    if outcome.status_code is not None:
        reason = "status"
    elif "timed out" in error or "timeout" in error:
        reason = "timeout"
    elif "refused" in error and ("address" in error or "private" in error):
        reason = "refused_address"
    else:
        reason = "connection"
    metrics.record_webhook_delivery(False, reason)
