"""Webhook wire types."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from controlplane_domain.webhooks.entity import (
    EVENT_NAMES,
    MAX_DESCRIPTION_LENGTH,
    MAX_EVENTS,
    MAX_URL_LENGTH,
    DeliveryStatus,
)
from controlplane_wire.base import OrganizationResource, Page, Request

Url = Annotated[
    str, Meta(min_length=1, max_length=MAX_URL_LENGTH, description="https (http only to loopback in development)")
]
EventName = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=64,
        description="execution.completed, execution.failed, workflow_run.status_changed, worker.status_changed, "
        "error, job.fired, or * (every event)",
        extra_json_schema={"enum": sorted(EVENT_NAMES)},
    ),
]
Events = Annotated[list[EventName], Meta(min_length=1, max_length=MAX_EVENTS)]
Description = Annotated[str, Meta(max_length=MAX_DESCRIPTION_LENGTH)]


class WebhookCreate(Request, kw_only=True):
    url: Url
    events: Events
    enabled: bool = True
    description: Description | None = None


class WebhookUpdate(Request, kw_only=True):
    url: Url | UnsetType = UNSET
    events: Events | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET
    description: Description | UnsetType | None = UNSET


class Webhook(OrganizationResource, kw_only=True):
    url: str
    events: list[str]
    enabled: bool
    description: str | None
    secret: str | None = None
    """The signing secret (`whsec_...`): only in the answer that created the webhook."""
    disabled_reason: str | None
    """Why the service disabled it (its deliveries failed for 3 days); None otherwise."""
    failing_since: datetime | None
    created_at: datetime
    updated_at: datetime


class WebhookList(Page[Webhook]):
    items: list[Webhook]


class Delivery(msgspec.Struct, kw_only=True):
    id: str
    webhook_id: str
    message_id: str
    """The `webhook-id` header: the same at every attempt and redelivery of the event."""
    event_type: str
    status: DeliveryStatus
    attempts: int
    response_code: int | None
    latency_ms: int | None
    last_error: str | None
    next_attempt_at: datetime | None
    """When the next attempt is due (pending deliveries only)."""
    first_attempt_at: datetime | None
    last_attempt_at: datetime | None
    redelivery_of: str | None
    payload: str
    """The body sent (JSON text)."""
    created_at: datetime


class DeliveryList(Page[Delivery]):
    items: list[Delivery]
