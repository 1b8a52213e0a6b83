"""Webhooks: an organization's subscriptions to its events, and each event's delivery to each subscriber (the
outbox: written in the transaction of the change that causes the event, then sent, retried and logged)."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar

from controlplane_domain.audit.audited_writes import Audited
from controlplane_domain.secrets.entity import SealedValue


class EventType(enum.StrEnum):
    EXECUTION_COMPLETED = "execution.completed"
    EXECUTION_FAILED = "execution.failed"
    WORKFLOW_RUN_STATUS_CHANGED = "workflow_run.status_changed"
    WORKER_STATUS_CHANGED = "worker.status_changed"
    ERROR = "error"
    JOB_FIRED = "job.fired"


EVERY_EVENT = "*"
"""A subscription to every event type, those added later too."""
TEST_EVENT = "webhook.test"
"""The type of `POST /api/v1/webhooks/{webhook_id}/test`'s event (sent to that webhook only)."""
EVENT_NAMES = frozenset({*(event.value for event in EventType), EVERY_EVENT})


class DeliveryStatus(enum.StrEnum):
    PENDING = "pending"
    """Waiting for its turn or its next attempt (or being attempted)."""
    SUCCEEDED = "succeeded"
    """The receiver answered 2xx."""
    FAILED = "failed"
    """Given up: its attempts failed for RETRY_WINDOW."""


RETRY_WINDOW = timedelta(hours=24)
"""A delivery is retried for this long after its first attempt, then failed."""
DISABLE_AFTER = timedelta(days=3)
"""A webhook whose every attempt failed for this long is disabled."""
FIRST_DELAY = timedelta(seconds=5)
MAX_DELAY = timedelta(hours=1)
LEASE = timedelta(seconds=60)
"""How long a node holds a delivery it attempts (longer than an attempt's timeout): another node retries it
after this when the first died."""
MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 1024
MAX_EVENTS = 16  # event types a webhook may listen to


def backoff(attempts: int, jitter: float) -> timedelta:
    """The wait after the `attempts`-th failed attempt: 5 s doubling each time up to an hour, of which the second
    half is random (`jitter` in [0, 1]), so that a receiver coming back is not hit by every sender at once."""
    full: timedelta = min(MAX_DELAY, FIRST_DELAY * 2 ** min(max(attempts, 1) - 1, 20))
    half: timedelta = full / 2
    return half + half * min(max(jitter, 0.0), 1.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Webhook:
    audited: ClassVar[Audited] = Audited(
        "webhook", ignored=frozenset({"failing_since", "disabled_reason"}), renamed={"secret": "signing_secret"}
    )
    """How its changes read in the audit log (the generic repositories record them)."""

    id: str
    organization_id: str
    url: str
    events: tuple[str, ...]
    """Event types (EventType values) or `*`."""
    enabled: bool
    description: str | None
    secret: SealedValue
    """The signing secret (`whsec_...`), sealed by the secrets cipher."""
    failing_since: datetime | None
    """When the current run of failed attempts began (None after a success)."""
    disabled_reason: str | None
    """Why the service disabled it (None when enabled, or disabled by a user)."""
    created_at: datetime
    updated_at: datetime

    def listens_to(self, event_type: str) -> bool:
        return EVERY_EVENT in self.events or event_type in self.events


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One event for one webhook: the body sent (the same bytes at every attempt) and how its attempts went."""

    id: str
    organization_id: str
    webhook_id: str
    message_id: str
    """The `webhook-id` header: the event's id, the same at every attempt and redelivery."""
    event_type: str
    payload: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: datetime
    created_at: datetime
    position: int = 0
    """Orders the deliveries made at the same instant (a webhook's deliveries go in (created_at, position, id))."""
    first_attempt_at: datetime | None = None
    last_attempt_at: datetime | None = None
    response_code: int | None = None
    latency_ms: int | None = None
    last_error: str | None = None
    lease_until: datetime | None = None
    lease_token: str | None = None
    redelivery_of: str | None = None
    updated_at: datetime | None = None

    @property
    def order(self) -> tuple[datetime, int, str]:
        return (self.created_at, self.position, self.id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """An event as the outbox writes it: one delivery for each enabled webhook of the organization listening."""

    id: str
    organization_id: str
    type: str
    payload: str
    created_at: datetime
    position: int


def secret_data(organization_id: str, webhook_id: str) -> bytes:
    """What a webhook's sealed secret is bound to (another row's secret does not open here)."""
    return json.dumps(["webhook", organization_id, webhook_id]).encode()


def body(event_type: str, timestamp: datetime, data: Mapping[str, object]) -> str:
    """The JSON body of an event, as Standard Webhooks shapes it: `{type, timestamp, data}`."""
    stamp = timestamp.isoformat().replace("+00:00", "Z")
    return json.dumps({"type": event_type, "timestamp": stamp, "data": data}, separators=(",", ":"), default=str)
