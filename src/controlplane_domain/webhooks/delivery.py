"""Delivering the outbox (every node's dispatcher runs it): due deliveries are leased (each by one node at a time,
a webhook's in order), sent, and their outcome settled: succeeded, retried after a back-off with jitter, or failed
after RETRY_WINDOW; a webhook failing for DISABLE_AFTER is disabled, and says why."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from controlplane_domain.errors import DomainError
from controlplane_domain.ports import Ports
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.usecases import require_cipher
from controlplane_domain.webhooks.entity import (
    DISABLE_AFTER,
    LEASE,
    RETRY_WINDOW,
    Delivery,
    DeliveryStatus,
    Webhook,
    backoff,
    secret_data,
)
from controlplane_domain.webhooks.listeners import CHANGED
from controlplane_domain.webhooks.ports import Outcome
from controlplane_domain.webhooks.usecases import sender

CLAIM_BATCH = 16
"""Deliveries leased (and sent at once, each to another webhook) a round of `deliver_due`: the dispatcher's send
slots by default (CONTROLPLANE_WEBHOOKS_CONCURRENCY)."""
ORGANIZATION_CONCURRENCY = 4
"""Deliveries of one organization leased at once, across nodes (CONTROLPLANE_WEBHOOKS_ORGANIZATION_CONCURRENCY)."""
ERROR_MAX_CHARACTERS = 1000


@dataclass(frozen=True, slots=True)
class Attempted:
    """One attempt, as the dispatcher's `on_attempt` hook sees it (metrics)."""

    delivery: Delivery
    """As settled: `status` pending (to be retried), succeeded or failed."""
    outcome: Outcome
    disabled: bool
    """The webhook was disabled after this attempt."""


OnAttempt = Callable[[Attempted], None]


async def claim(
    ports: Ports, limit: int = CLAIM_BATCH, per_organization: int | None = ORGANIZATION_CONCURRENCY
) -> list[tuple[Delivery, Webhook]]:
    """Lease the deliveries due now (one transaction; each carries the lease's token), with their webhooks
    (a delivery whose webhook was deleted meanwhile went with it, and is left out)."""
    now = ports.clock.now()
    token = ports.ids.new_id()
    async with ports.uow() as uow:
        claimed = await uow.commit_with(
            lambda: uow.webhooks.claim_due(now, now + LEASE, token, limit, per_organization)
        )
    if not claimed:
        return []
    async with ports.read() as uow:
        webhooks = {each.id: each for each in await uow.webhooks.webhooks_of(sorted({d.webhook_id for d in claimed}))}
    return [(delivery, webhooks[delivery.webhook_id]) for delivery in claimed if delivery.webhook_id in webhooks]


async def deliver_due(
    ports: Ports,
    *,
    jitter: Callable[[], float],
    on_attempt: OnAttempt | None = None,
    limit: int = CLAIM_BATCH,
    per_organization: int | None = ORGANIZATION_CONCURRENCY,
) -> int:
    """One round (tests; the dispatcher sends each delivery on its own instead): lease what is due, send it all at
    once, settle each. How many were attempted."""
    claimed = await claim(ports, limit, per_organization)
    attempts = [attempt(ports, delivery, webhook, jitter=jitter) for delivery, webhook in claimed]
    for attempted in await asyncio.gather(*attempts):
        if attempted is not None and on_attempt is not None:
            on_attempt(attempted)
    return len(claimed)


async def attempt(
    ports: Ports, delivery: Delivery, webhook: Webhook, *, jitter: Callable[[], float]
) -> Attempted | None:
    """Send `delivery` (leased) to `webhook` and settle the outcome; None when the lease was lost meanwhile."""
    started = ports.clock.now()
    try:
        secret = require_cipher(ports).decrypt(webhook.secret.data, secret_data(webhook.organization_id, webhook.id))
    except DomainError as exc:
        outcome = Outcome(None, 0, f"the webhook's signing secret cannot be opened: {exc.message}")
    else:
        outcome = await sender(ports).send(webhook.url, delivery.message_id, started, delivery.payload, secret)
    return await settle(ports, delivery, webhook, outcome, started, jitter=jitter)


@retry_transient
async def settle(
    ports: Ports, delivery: Delivery, webhook: Webhook, outcome: Outcome, started: datetime, *,
    jitter: Callable[[], float],
) -> Attempted | None:  # fmt: skip
    """Record how an attempt went (if this node still holds its lease), and what it means for the webhook."""
    now = ports.clock.now()
    first = delivery.first_attempt_at or started
    attempts = delivery.attempts + 1
    if outcome.succeeded:
        status, next_at = DeliveryStatus.SUCCEEDED, delivery.next_attempt_at
    elif now - first >= RETRY_WINDOW:
        status, next_at = DeliveryStatus.FAILED, delivery.next_attempt_at
    else:
        status, next_at = DeliveryStatus.PENDING, min(now + backoff(attempts, jitter()), first + RETRY_WINDOW)
    error = outcome.error or (None if outcome.succeeded else f"the receiver answered {outcome.status_code}")
    settled = replace(
        delivery, status=status, attempts=attempts, first_attempt_at=first, last_attempt_at=started,
        next_attempt_at=next_at, response_code=outcome.status_code, latency_ms=outcome.latency_ms,
        last_error=error and error[:ERROR_MAX_CHARACTERS], lease_until=None, lease_token=None, updated_at=now,
    )  # fmt: skip
    disabled = False
    async with ports.uow() as uow:
        if not await uow.webhooks.settle(settled, delivery.lease_token or ""):
            return None
        changed = _webhook_after(webhook, outcome, started, now, error)
        if changed is not None:
            current = await uow.webhooks.get(webhook.organization_id, webhook.id, for_update=True)
            if current is not None:
                changed = _webhook_after(current, outcome, started, now, error)
                if changed is not None:
                    disabled = current.enabled and not changed.enabled
                    await uow.webhooks.update(changed)
        await uow.commit()
    if disabled and ports.bus is not None:
        await ports.bus.publish(CHANGED)
    return Attempted(settled, outcome, disabled)


def _webhook_after(
    webhook: Webhook, outcome: Outcome, started: datetime, now: datetime, error: str | None
) -> Webhook | None:
    """The webhook as an attempt leaves it (None: unchanged): its run of failures ended by a success, begun by a
    failure, or long enough (DISABLE_AFTER) to disable it."""
    if outcome.succeeded:
        return None if webhook.failing_since is None else replace(webhook, failing_since=None)
    if webhook.failing_since is None:
        return replace(webhook, failing_since=started)
    if webhook.enabled and now - webhook.failing_since >= DISABLE_AFTER:
        since = webhook.failing_since.isoformat()
        reason = f"disabled by the service: every delivery attempt failed since {since} (last: {error})"
        return replace(webhook, enabled=False, disabled_reason=reason[:ERROR_MAX_CHARACTERS], updated_at=now)
    return None
