"""What the webhooks area needs: a store for webhooks and their deliveries (the outbox), and a sender."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from controlplane_domain.paging import PageRequest
from controlplane_domain.repository import Repository
from controlplane_domain.webhooks.entity import Delivery, Event, Webhook


class WebhookRepository(Repository[Webhook], Protocol):
    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Webhook]:
        """Webhooks of every organization whose signing secret another key sealed, by id, at most `limit` (locked
        until the unit of work ends, for a key rotation)."""

    async def delete(self, organization_id: str, webhook_id: str) -> None:
        """Delete the webhook and its deliveries."""

    async def listened(self, organization_id: str) -> frozenset[str]:
        """The event types the organization's enabled webhooks listen to (`*` among them when one listens to all)."""

    async def enqueue(self, event: Event) -> int:
        """The outbox: one pending delivery of `event` for each enabled webhook of its organization that listens to
        its type, due at once. How many."""

    async def add_delivery(self, delivery: Delivery) -> None:
        """A delivery for one webhook (a test event, a redelivery)."""

    async def get_delivery(self, organization_id: str, webhook_id: str, delivery_id: str) -> Delivery | None: ...

    async def delivery_page(
        self, organization_id: str, webhook_id: str, page: PageRequest
    ) -> tuple[list[Delivery], int]:
        """The webhook's deliveries, newest first ((created_at, position, id) descending), and their total."""

    async def claim_due(
        self, now: datetime, until: datetime, token: str, limit: int, per_organization: int | None = None
    ) -> list[Delivery]:
        """Across organizations (the dispatcher only): lease up to `limit` deliveries due at `now`, each the oldest
        pending delivery of an enabled webhook, whose lease (if any) ran out: `lease_until` and `lease_token` set.
        A delivery is leased by one claimer at a time (a compare-and-set: of two claims of one delivery, the second
        finds it leased); a webhook's next delivery waits until the one before it succeeded or failed. At most
        `per_organization` deliveries of one organization are leased at once (those leased already count), and
        fair shares go first: the organization with the fewest leased gets the next one, then the oldest due."""

    async def settle(self, delivery: Delivery, token: str) -> bool:
        """Write an attempt's outcome (`delivery` as it now is, its lease released or not) if `token` still holds
        the lease; False when it does not (the lease ran out and another claimer took it)."""

    async def webhooks_of(self, ids: list[str]) -> list[Webhook]:
        """The webhooks with these ids, across organizations (the dispatcher only)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one attempt went: the receiver's status code (None when none came) and the time it took."""

    status_code: int | None
    latency_ms: int
    error: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300 and self.error is None


class WebhookSender(Protocol):
    async def check(self, url: str) -> str | None:
        """Why deliveries may not go to `url` once its host is resolved (addresses.py); None when they may."""

    async def send(self, url: str, message_id: str, timestamp: datetime, payload: str, secret: str) -> Outcome:
        """POST `payload` signed with `secret` (Standard Webhooks headers) to the address `url`'s host resolved to
        and was checked at, following no redirect; never raises for the receiver's failures."""

    def new_secret(self) -> str:
        """A new signing secret, `whsec_` then base64."""
