"""The webhooks' SQL repository: webhooks, the outbox's insert (one INSERT ... SELECT an event), the deliveries'
log, and the dispatcher's claim (Postgres: FOR UPDATE SKIP LOCKED; SQLite: its one writer) and settle."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError

from controlplane_adapters.sql.base import SqlRepository
from controlplane_adapters.sql.columns import UtcDateTime
from controlplane_adapters.sql.hot import hot
from controlplane_adapters.sql.listing import ordered
from controlplane_adapters.sql.pages import read_page_where
from controlplane_adapters.webhooks.table import (
    WEBHOOK_ROWS,
    delivery_to_domain,
    delivery_to_row,
    new_uuid,
    webhook_deliveries,
    webhooks,
)
from controlplane_domain.errors import Conflict
from controlplane_domain.paging import PageRequest
from controlplane_domain.webhooks.entity import EVERY_EVENT, Delivery, DeliveryStatus, Event, Webhook

w, d = webhooks, webhook_deliveries
PENDING = DeliveryStatus.PENDING.value


@cache
def _enqueue() -> sa.Insert:
    """One delivery of the event for each enabled webhook of its organization listening to its type."""
    columns = ("id", "organization_id", "webhook_id", "message_id", "event_type", "payload", "status", "attempts",
               "next_attempt_at", "position", "created_at", "updated_at")  # fmt: skip
    now = sa.bindparam("e_now", type_=UtcDateTime())
    select = sa.select(
        new_uuid(), w.c.organization_id, w.c.id, sa.bindparam("e_id", type_=sa.String()),
        sa.bindparam("e_type", type_=sa.String()), sa.bindparam("e_payload", type_=sa.Text()),
        sa.literal(PENDING, sa.String()), sa.literal(0, sa.Integer()), now,
        sa.bindparam("e_position", type_=sa.BigInteger()), now, now,
    ).where(
        w.c.organization_id == sa.bindparam("e_organization_id", type_=sa.String()),
        w.c.enabled.is_(True),
        sa.or_(w.c.events.like(sa.bindparam("e_like", type_=sa.String())), w.c.events.like(f"%,{EVERY_EVENT},%")),
    )  # fmt: skip
    return hot(d.insert().from_select(columns, select))


def event_parameters(event: Event) -> dict[str, Any]:
    """The parameters of an event's deliveries' insert (`_enqueue`; an execution's change writes them with its own
    statement on Postgres: `executions/statements.py` `outbox_of`)."""
    return {"e_id": event.id, "e_type": event.type, "e_payload": event.payload, "e_now": event.created_at,
            "e_position": event.position, "e_organization_id": event.organization_id,
            "e_like": f"%,{event.type},%"}  # fmt: skip


def _heads() -> sa.ScalarSelect[Any]:
    """The oldest pending delivery of each enabled webhook (one index probe a webhook)."""
    e = d.alias("head")
    first = (
        sa.select(e.c.id)
        .where(e.c.webhook_id == w.c.id, e.c.status == PENDING)
        .order_by(e.c.created_at, e.c.position, e.c.id)
        .limit(1)
        .scalar_subquery()
    )
    return sa.select(first).where(w.c.enabled.is_(True)).scalar_subquery()


def _free(now: Any) -> sa.ColumnElement[bool]:
    return sa.or_(d.c.lease_until.is_(None), d.c.lease_until <= now)


@cache
def _claim(postgres: bool) -> sa.Update:
    """The lease of the due deliveries: the oldest pending delivery of each enabled webhook, when due and free, at
    most `c_limit`, and for each organization at most `c_cap` leased at once (those it has leased already, on any
    node, count). Fair shares first: the organization with the fewest deliveries leased gets the next one (then
    the oldest due), so that an organization with many due deliveries, or slow receivers, cannot take every slot.
    On Postgres the rows are locked as they are picked (SKIP LOCKED: a head another node is leasing is passed
    over, never its webhook's next delivery), and the UPDATE checks again that each is pending and free (a
    compare-and-set: of two claims of one head, the second finds it leased); SQLite runs one writer at a time. A
    hot atomic statement: on Postgres one round trip, its own transaction."""
    now = sa.bindparam("c_now", type_=UtcDateTime())
    due = sa.case((sa.and_(d.c.next_attempt_at <= now, _free(now)), 1), else_=0)
    ranked = (
        sa.select(
            d.c.id, d.c.next_attempt_at, due.label("due"),
            sa.func.sum(sa.case((d.c.lease_until > now, 1), else_=0))
            .over(partition_by=d.c.organization_id).label("busy"),
            sa.func.row_number()
            .over(partition_by=(d.c.organization_id, due), order_by=(d.c.next_attempt_at, d.c.id)).label("rank"),
        )
        .where(d.c.id.in_(_heads()), d.c.status == PENDING)
        .subquery("ranked")
    )  # fmt: skip
    share = ranked.c.busy + ranked.c["rank"]
    picked = (
        sa.select(ranked.c.id)
        .where(ranked.c.due == 1, share <= sa.bindparam("c_cap", type_=sa.Integer()))
        .order_by(share, ranked.c.next_attempt_at, ranked.c.id)
        .limit(sa.bindparam("c_limit", type_=sa.Integer()))
    )
    candidates = sa.select(d.c.id).where(d.c.id.in_(picked.scalar_subquery()))
    if postgres:
        candidates = candidates.with_for_update(skip_locked=True)
    statement = (
        d.update()
        .where(d.c.id.in_(candidates.scalar_subquery()), d.c.status == PENDING, _free(now))
        .values(lease_until=sa.bindparam("c_until", type_=UtcDateTime()), lease_token=sa.bindparam("c_token"))
        .returning(*d.c)
    )
    return hot(statement, atomic=True)


NO_CAP = 2**31 - 1


class SqlWebhookRepository(SqlRepository[Webhook]):
    rows = WEBHOOK_ROWS
    noun = "webhook"
    audited = Webhook.audited
    unique_field = "id"

    async def sealed_elsewhere(self, key_id: str, limit: int) -> list[Webhook]:
        return await self._sealed_elsewhere(self.table.c.secret_key_id, key_id, limit)

    async def listened(self, organization_id: str) -> frozenset[str]:
        statement = sa.select(w.c.events).where(w.c.organization_id == organization_id, w.c.enabled.is_(True))
        found: set[str] = set()
        for row in await self.connection.execute(statement):
            found.update(name for name in row.events.split(",") if name)
        return frozenset(found)

    async def enqueue(self, event: Event) -> int:
        """The event's deliveries (one for each enabled webhook listening); how many."""
        result = await self.connection.execute(_enqueue(), event_parameters(event))
        return int(result.rowcount)

    async def add_delivery(self, delivery: Delivery) -> None:
        try:
            await self.connection.execute(d.insert(), delivery_to_row(delivery))
        except IntegrityError as exc:
            raise Conflict("the webhook was deleted meanwhile") from exc

    async def get_delivery(self, organization_id: str, webhook_id: str, delivery_id: str) -> Delivery | None:
        statement = sa.select(d).where(
            d.c.organization_id == organization_id, d.c.webhook_id == webhook_id, d.c.id == delivery_id
        )
        row = (await self.connection.execute(statement)).first()
        return None if row is None else delivery_to_domain(row)

    async def delivery_page(
        self, organization_id: str, webhook_id: str, page: PageRequest
    ) -> tuple[list[Delivery], int]:
        where = (d.c.organization_id == organization_id, d.c.webhook_id == webhook_id)
        order = ordered(page, d.c.created_at, d.c.position, d.c.id)
        rows, total = await read_page_where(self.connection, organization_id, page, d, where, order)
        return [delivery_to_domain(row) for row in rows], total

    async def claim_due(
        self, now: datetime, until: datetime, token: str, limit: int, per_organization: int | None = None
    ) -> list[Delivery]:
        parameters = {"c_now": now, "c_until": until, "c_token": token, "c_limit": limit,
                      "c_cap": NO_CAP if per_organization is None else per_organization}  # fmt: skip
        statement = _claim(self.connection.dialect.name == "postgresql")
        return sorted((delivery_to_domain(row) for row in await self.connection.execute(statement, parameters)),
                      key=lambda delivery: delivery.order)  # fmt: skip

    async def settle(self, delivery: Delivery, token: str) -> bool:
        row = delivery_to_row(delivery)
        values = {name: row[name] for name in ("status", "attempts", "next_attempt_at", "first_attempt_at",
                  "last_attempt_at", "response_code", "latency_ms", "last_error", "lease_until", "lease_token",
                  "updated_at")}  # fmt: skip
        statement = d.update().where(d.c.id == delivery.id, d.c.lease_token == token).values(**values)
        return int((await self.connection.execute(statement)).rowcount) == 1

    async def webhooks_of(self, ids: list[str]) -> list[Webhook]:
        if not ids:
            return []
        rows = await self.connection.execute(sa.select(w).where(w.c.id.in_(ids)))
        return [WEBHOOK_ROWS.to_domain(row) for row in rows]

    async def delete(self, organization_id: str, object_id: str) -> None:
        # the deliveries first: SQLite enforces no foreign key's ON DELETE unless told to
        await self.connection.execute(
            d.delete().where(d.c.organization_id == organization_id, d.c.webhook_id == object_id)
        )
        await super().delete(organization_id, object_id)
