"""webhooks (subscriptions to an organization's events) and their deliveries (the outbox)

Create Date: 2026-12-03 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from controlplane_adapters.sql.migrations import table_parts as parts

revision = "0022"
down_revision = "0021"

DELIVERY_INDEXES = {
    "ix_webhook_deliveries_webhook_status": ["webhook_id", "status", "created_at", "position", "id"],
    "ix_webhook_deliveries_webhook_created": ["webhook_id", "created_at", "position", "id"],
    "ix_webhook_deliveries_status_next": ["status", "next_attempt_at"],
}


def upgrade() -> None:
    op.create_table(
        "webhooks",
        *parts.id_and_organization_columns(),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("events", sa.String(length=1024), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("secret_key_id", sa.String(length=64), nullable=False),
        sa.Column("secret_sealed", sa.LargeBinary(), nullable=False),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        *parts.timestamp_columns(),
        parts.primary_key("webhooks"),
    )
    parts.create_page_index("webhooks")
    op.create_table(
        "webhook_deliveries",
        *parts.id_and_organization_columns(),
        sa.Column("webhook_id", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.String(length=64), nullable=False),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("first_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("response_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_token", sa.String(length=64), nullable=True),
        sa.Column("redelivery_of", sa.String(length=64), nullable=True),
        *parts.timestamp_columns(),
        parts.foreign_key("webhook_deliveries", "webhook_id", "webhooks", ondelete="CASCADE"),
        parts.primary_key("webhook_deliveries"),
    )
    parts.create_indexes("webhook_deliveries", DELIVERY_INDEXES)


def downgrade() -> None:
    parts.drop_table("webhook_deliveries", list(reversed(DELIVERY_INDEXES)))
    parts.drop_table("webhooks", ["ix_webhooks_org_created"])
