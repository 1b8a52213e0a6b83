"""Webhooks in SQL: the webhooks and webhook_deliveries (the outbox) tables, and their row mapping."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from controlplane_adapters.sql.columns import UtcDateTime, owned_table
from controlplane_adapters.sql.rows import Custom, RowMapping, sealed
from controlplane_domain.webhooks.entity import Delivery, DeliveryStatus, Webhook

webhooks = owned_table(
    "webhooks",
    sa.Column("url", sa.Text(), nullable=False),
    sa.Column("events", sa.String(1024), nullable=False),  # ",a,b," (a LIKE finds a type on every database)
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("description", sa.Text(), nullable=True),
    sa.Column("secret_key_id", sa.String(64), nullable=False),
    sa.Column("secret_sealed", sa.LargeBinary(), nullable=False),
    sa.Column("failing_since", UtcDateTime(), nullable=True),
    sa.Column("disabled_reason", sa.Text(), nullable=True),
)

webhook_deliveries = owned_table(
    "webhook_deliveries",
    sa.Column("webhook_id", sa.String(64), sa.ForeignKey("webhooks.id", ondelete="CASCADE"), nullable=False),
    sa.Column("message_id", sa.String(64), nullable=False),
    sa.Column("event_type", sa.String(64), nullable=False),
    sa.Column("payload", sa.Text(), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("attempts", sa.Integer(), nullable=False),
    sa.Column("next_attempt_at", UtcDateTime(), nullable=False),
    sa.Column("position", sa.BigInteger(), nullable=False),
    sa.Column("first_attempt_at", UtcDateTime(), nullable=True),
    sa.Column("last_attempt_at", UtcDateTime(), nullable=True),
    sa.Column("response_code", sa.Integer(), nullable=True),
    sa.Column("latency_ms", sa.Integer(), nullable=True),
    sa.Column("last_error", sa.Text(), nullable=True),
    sa.Column("lease_until", UtcDateTime(), nullable=True),
    sa.Column("lease_token", sa.String(64), nullable=True),
    sa.Column("redelivery_of", sa.String(64), nullable=True),
    # a webhook's pending deliveries in order (the claim's "is it the oldest?"), its log, and what is due
    sa.Index("ix_webhook_deliveries_webhook_status", "webhook_id", "status", "created_at", "position", "id"),
    sa.Index("ix_webhook_deliveries_webhook_created", "webhook_id", "created_at", "position", "id"),
    sa.Index("ix_webhook_deliveries_status_next", "status", "next_attempt_at"),
    paged=False,
)


class new_uuid(FunctionElement[str]):  # noqa: N801 (a SQL function's name)
    """A random UUID (version 4) made by the database: one per row of an INSERT ... SELECT."""

    type = sa.String()
    inherit_cache = True


@compiles(new_uuid, "postgresql")
def _postgres_uuid(element: Any, compiler: Any, **kw: Any) -> str:
    return "gen_random_uuid()::text"


@compiles(new_uuid, "sqlite")
def _sqlite_uuid(element: Any, compiler: Any, **kw: Any) -> str:
    return (
        "(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2)"
        " || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-'"
        " || lower(hex(randomblob(6))))"
    )


def events_text(events: tuple[str, ...]) -> str:
    return "," + ",".join(events) + ","


WEBHOOK_ROWS = RowMapping(
    Webhook,
    webhooks,
    events=Custom(
        ("events",),
        lambda events: {"events": events_text(events)},
        lambda row: tuple(filter(None, row.events.split(","))),
    ),
    secret=sealed("secret_key_id", "secret_sealed"),
)

DELIVERY_FIELDS = tuple(column.name for column in webhook_deliveries.columns)


def delivery_to_row(delivery: Delivery) -> dict[str, Any]:
    row = {name: getattr(delivery, name) for name in DELIVERY_FIELDS}
    row["status"] = delivery.status.value
    row["updated_at"] = delivery.updated_at or delivery.created_at
    return row


def delivery_to_domain(row: Any) -> Delivery:
    values = {name: getattr(row, name) for name in DELIVERY_FIELDS}
    values["status"] = DeliveryStatus(row.status)
    return Delivery(**values)
