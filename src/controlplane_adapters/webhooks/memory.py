"""Webhooks in the memory store: the webhooks and their deliveries (the store's one writer at a time is the
claim's compare-and-set)."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import replace
from datetime import datetime

from controlplane_adapters.memory.base import MemoryRepository, sorted_page
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.webhooks.entity import Delivery, DeliveryStatus, Event, Webhook

PENDING = DeliveryStatus.PENDING


class MemoryWebhookRepository(MemoryRepository[Webhook]):
    noun = "webhook"
    audited = Webhook.audited
    unique_field = "id"

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Webhook]:
        return sorted((hook for hook in self.rows.values() if hook.secret.key_id != key_id), key=lambda h: h.id)[:limit]

    def __init__(self, rows: dict[str, Webhook], deliveries: dict[str, Delivery]) -> None:
        super().__init__(rows)
        self.deliveries = deliveries

    async def delete(self, organization_id: str, object_id: str) -> None:
        if await self.get(organization_id, object_id) is not None:
            await super().delete(organization_id, object_id)  # the row, and its audit event
            for delivery_id in [each.id for each in self.deliveries.values() if each.webhook_id == object_id]:
                del self.deliveries[delivery_id]

    async def listened(self, organization_id: str) -> frozenset[str]:
        mine = (hook for hook in self.rows.values() if hook.organization_id == organization_id and hook.enabled)
        return frozenset(name for hook in mine for name in hook.events)

    async def enqueue(self, event: Event) -> int:
        listening = [hook for hook in self.rows.values() if hook.organization_id == event.organization_id
                     and hook.enabled and hook.listens_to(event.type)]  # fmt: skip
        for hook in listening:
            delivery = Delivery(
                id=str(uuid.uuid4()), organization_id=event.organization_id, webhook_id=hook.id, message_id=event.id,
                event_type=event.type, payload=event.payload, status=PENDING, attempts=0,
                next_attempt_at=event.created_at, created_at=event.created_at, position=event.position,
                updated_at=event.created_at,
            )  # fmt: skip
            self.deliveries[delivery.id] = delivery
        return len(listening)

    async def add_delivery(self, delivery: Delivery) -> None:
        if delivery.webhook_id not in self.rows:
            raise Conflict("the webhook was deleted meanwhile")
        self.deliveries[delivery.id] = delivery

    async def get_delivery(self, organization_id: str, webhook_id: str, delivery_id: str) -> Delivery | None:
        found = self.deliveries.get(delivery_id)
        if found is None or found.organization_id != organization_id or found.webhook_id != webhook_id:
            return None
        return found

    async def delivery_page(
        self, organization_id: str, webhook_id: str, page: PageRequest
    ) -> tuple[list[Delivery], int]:
        mine = (each for each in self.deliveries.values()
                if each.organization_id == organization_id and each.webhook_id == webhook_id)  # fmt: skip
        return sorted_page(mine, lambda each: each.order, page)

    async def claim_due(
        self, now: datetime, until: datetime, token: str, limit: int, per_organization: int | None = None
    ) -> list[Delivery]:
        heads: dict[str, Delivery] = {}
        for each in self.deliveries.values():
            if each.status is PENDING and (each.webhook_id not in heads or each.order < heads[each.webhook_id].order):
                heads[each.webhook_id] = each
        enabled = [head for head in heads.values() if (hook := self.rows.get(head.webhook_id)) and hook.enabled]
        busy = Counter(head.organization_id for head in enabled if head.lease_until and head.lease_until > now)
        due = [head for head in enabled
               if head.next_attempt_at <= now and (head.lease_until is None or head.lease_until <= now)]  # fmt: skip
        due.sort(key=lambda each: (each.next_attempt_at, each.id))
        ranked: list[tuple[int, Delivery]] = []
        rank: Counter[str] = Counter()
        for head in due:
            rank[head.organization_id] += 1
            share = busy[head.organization_id] + rank[head.organization_id]
            if per_organization is None or share <= per_organization:
                ranked.append((share, head))
        ranked.sort(key=lambda pair: (pair[0], pair[1].next_attempt_at, pair[1].id))
        claimed = [replace(each, lease_until=until, lease_token=token) for _, each in ranked[:limit]]
        for each in claimed:
            self.deliveries[each.id] = each
        return sorted(claimed, key=lambda each: each.order)

    async def settle(self, delivery: Delivery, token: str) -> bool:
        current = self.deliveries.get(delivery.id)
        if current is None or current.lease_token != token:
            return False
        self.deliveries[delivery.id] = delivery
        return True

    async def webhooks_of(self, ids: list[str]) -> list[Webhook]:
        return [self.rows[each] for each in ids if each in self.rows]
