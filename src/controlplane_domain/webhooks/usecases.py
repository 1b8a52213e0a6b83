"""Webhook use cases: create (the secret shown once), read, change, delete, the deliveries' log, a redelivery
and a test event."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from controlplane_domain import crud
from controlplane_domain.crud import Area
from controlplane_domain.errors import Conflict, NotFound, ValidationFailed
from controlplane_domain.names import is_uuid
from controlplane_domain.paging import Page, PageRequest
from controlplane_domain.patching import UNSET, Unset
from controlplane_domain.ports import Ports, UnitOfWork, wired
from controlplane_domain.retry import retry_transient
from controlplane_domain.secrets.entity import SealedValue
from controlplane_domain.secrets.usecases import require_cipher
from controlplane_domain.webhooks.addresses import parse_url
from controlplane_domain.webhooks.entity import (
    EVENT_NAMES,
    EVERY_EVENT,
    MAX_DESCRIPTION_LENGTH,
    MAX_EVENTS,
    TEST_EVENT,
    Delivery,
    DeliveryStatus,
    Webhook,
    body,
    secret_data,
)
from controlplane_domain.webhooks.listeners import CHANGED, DUE
from controlplane_domain.webhooks.ports import WebhookSender


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateWebhook:
    url: str
    events: tuple[str, ...]
    enabled: bool = True
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateWebhook:
    url: str | Unset = UNSET
    events: tuple[str, ...] | Unset = UNSET
    enabled: bool | Unset = UNSET
    description: str | Unset | None = UNSET


@dataclass(frozen=True, slots=True)
class WebhookView:
    """A webhook as answered; `secret` only when it was just made."""

    webhook: Webhook
    secret: str | None = None


def sender(ports: Ports) -> WebhookSender:
    return wired(ports.webhook_sender, "no webhook sender is wired (Ports.webhook_sender)")


async def _publish(ports: Ports, *topics: str) -> None:
    if ports.bus is not None:
        await ports.bus.publish(*topics)


def _events(events: tuple[str, ...]) -> tuple[str, ...]:
    if not events:
        raise ValidationFailed("events", "must name at least one event type (or '*')")
    if len(events) > MAX_EVENTS:
        raise ValidationFailed("events", f"at most {MAX_EVENTS} event types")
    for index, name in enumerate(events):
        if name not in EVENT_NAMES:
            raise ValidationFailed(f"events.{index}", f"unknown event type '{name}' (one of {sorted(EVENT_NAMES)})")
    unique = tuple(dict.fromkeys(events))
    return (EVERY_EVENT,) if EVERY_EVENT in unique else unique


async def _check_url(ports: Ports, url: str) -> None:
    parse_url(url)
    problem = await sender(ports).check(url)
    if problem is not None:
        raise ValidationFailed("url", problem)


def _check_description(description: str | None) -> None:
    if description is not None and len(description) > MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed("description", f"must be at most {MAX_DESCRIPTION_LENGTH} characters")


WEBHOOKS = Area("webhook", lambda uow: uow.webhooks, valid_id=is_uuid)


async def require_webhook(uow: UnitOfWork, organization_id: str, webhook_id: str, *, lock: bool = False) -> Webhook:
    return await crud.require(WEBHOOKS, uow, organization_id, webhook_id, lock=lock)


@retry_transient
async def create_webhook(ports: Ports, organization_id: str, command: CreateWebhook) -> WebhookView:
    events = _events(command.events)
    _check_description(command.description)
    await _check_url(ports, command.url)
    cipher = require_cipher(ports)
    now = ports.clock.now()
    webhook_id = ports.ids.new_id()
    secret = sender(ports).new_secret()
    sealed = SealedValue(cipher.key_id, cipher.encrypt(secret, secret_data(organization_id, webhook_id)))
    webhook = Webhook(
        id=webhook_id, organization_id=organization_id, url=command.url, events=events, enabled=command.enabled,
        description=command.description, secret=sealed, failing_since=None, disabled_reason=None, created_at=now,
        updated_at=now,
    )  # fmt: skip
    await crud.add(WEBHOOKS, ports, webhook)
    await _publish(ports, CHANGED)
    return WebhookView(webhook, secret)


async def get_webhook(ports: Ports, organization_id: str, webhook_id: str) -> WebhookView:
    return WebhookView(await crud.get(WEBHOOKS, ports, organization_id, webhook_id))


async def list_webhooks(ports: Ports, organization_id: str, page: PageRequest) -> Page[WebhookView]:
    return (await crud.list_page(WEBHOOKS, ports, organization_id, page)).map(WebhookView)


@retry_transient
async def update_webhook(ports: Ports, organization_id: str, webhook_id: str, command: UpdateWebhook) -> WebhookView:
    events = None if isinstance(command.events, Unset) else _events(command.events)
    if not isinstance(command.description, Unset):
        _check_description(command.description)
    if not isinstance(command.url, Unset):
        await _check_url(ports, command.url)

    def change(webhook: Webhook, now: datetime) -> Webhook:
        updated = crud.patched(webhook, command, now, events=webhook.events if events is None else events)
        if updated.enabled and not webhook.enabled:  # enabled again: a clean slate
            updated = replace(updated, disabled_reason=None, failing_since=None)
        return updated

    updated = await crud.update(WEBHOOKS, ports, organization_id, webhook_id, change)
    await _publish(ports, CHANGED, DUE)
    return WebhookView(updated)


@retry_transient
async def delete_webhook(ports: Ports, organization_id: str, webhook_id: str) -> None:
    """Delete the webhook and its deliveries' log (undelivered events are dropped)."""
    await crud.delete(WEBHOOKS, ports, organization_id, webhook_id)
    await _publish(ports, CHANGED)


async def list_deliveries(ports: Ports, organization_id: str, webhook_id: str, page: PageRequest) -> Page[Delivery]:
    async with ports.read() as uow:
        await require_webhook(uow, organization_id, webhook_id)
        items, total = await uow.webhooks.delivery_page(organization_id, webhook_id, page)
    return Page(items=items, total=total, limit=page.limit, offset=page.offset)


def _new_delivery(ports: Ports, webhook: Webhook, now: datetime, **fields: Any) -> Delivery:
    return Delivery(
        id=ports.ids.new_id(), organization_id=webhook.organization_id, webhook_id=webhook.id,
        status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=now, created_at=now, updated_at=now, **fields,
    )  # fmt: skip


def _require_enabled(webhook: Webhook) -> None:
    if not webhook.enabled:
        reason = f" ({webhook.disabled_reason})" if webhook.disabled_reason else ""
        raise Conflict(f"the webhook is disabled{reason}: enable it first", {"field": "enabled"})


@retry_transient
async def redeliver(ports: Ports, organization_id: str, webhook_id: str, delivery_id: str) -> Delivery:
    """Send a finished delivery's event again, as a new delivery (same `webhook-id` and body) after the webhook's
    pending ones; 409 while it is still pending, or when the webhook is disabled."""
    now = ports.clock.now()
    async with ports.uow() as uow:
        webhook = await require_webhook(uow, organization_id, webhook_id)
        found = (
            None
            if not is_uuid(delivery_id)
            else await uow.webhooks.get_delivery(organization_id, webhook_id, delivery_id)
        )
        if found is None:
            raise NotFound("delivery", delivery_id)
        if found.status is DeliveryStatus.PENDING:
            raise Conflict("the delivery is still pending", {"status": found.status.value})
        _require_enabled(webhook)
        again = _new_delivery(ports, webhook, now, message_id=found.message_id, event_type=found.event_type,
                              payload=found.payload, redelivery_of=found.id)  # fmt: skip
        await uow.webhooks.add_delivery(again)
        await uow.commit()
    await _publish(ports, DUE)
    return again


@retry_transient
async def send_test(ports: Ports, organization_id: str, webhook_id: str) -> Delivery:
    """A `webhook.test` event to this webhook only, delivered like any other (after its pending ones)."""
    now = ports.clock.now()
    async with ports.uow() as uow:
        webhook = await require_webhook(uow, organization_id, webhook_id)
        _require_enabled(webhook)
        message_id = ports.ids.new_id()
        data = {"webhook_id": webhook.id, "message": "a test event sent on request"}
        test = _new_delivery(ports, webhook, now, message_id=message_id, event_type=TEST_EVENT,
                             payload=body(TEST_EVENT, now, data))  # fmt: skip
        await uow.webhooks.add_delivery(test)
        await uow.commit()
    await _publish(ports, DUE)
    return test
